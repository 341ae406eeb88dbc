// Drives the openapi-generator `go` client (module github.com/openauth/client) through a workflow's life.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"time"

	openauth "github.com/openauth/client"
)

const workflowJSON = `{"name": "Generated client (openapi-generator go)",
  "nodes": [{"id": "input", "type": "text_input", "config": {"variable": "ticket"}},
            {"id": "model", "type": "llm_call", "config": {"model": "fake"}},
            {"id": "result", "type": "text_output", "config": {"format": "plain"}}],
  "edges": [{"from": "input", "to": "model"}, {"from": "model", "to": "result"}]}`

var (
	api *openauth.APIClient
	ctx context.Context
)

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		if e, ok := err.(*openauth.GenericOpenAPIError); ok {
			fmt.Fprintln(os.Stderr, string(e.Body()))
		}
		os.Exit(1)
	}
}

func check(ok bool, format string, args ...any) {
	if !ok {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		os.Exit(1)
	}
}

func readUntil(workflowID, runID string, status openauth.RunStatus) openauth.RunDetail {
	deadline := time.Now().Add(30 * time.Second)
	for {
		envelope, _, err := api.WorkflowsAPI.GetRun(ctx, workflowID, runID).Execute()
		must(err, "get run")
		if envelope.Data.Status == status {
			return envelope.Data
		}
		check(time.Now().Before(deadline), "run %s is %s, not %s", runID, envelope.Data.Status, status)
		time.Sleep(100 * time.Millisecond)
	}
}

func run(workflowID, text string) string {
	envelope, _, err := api.WorkflowsAPI.RunWorkflow(ctx, workflowID).RunRequest(*openauth.NewRunRequest(map[string]string{"ticket": text})).Execute()
	must(err, "run workflow")
	return envelope.Data.Id
}

func main() {
	cfg := openauth.NewConfiguration()
	cfg.Servers = openauth.ServerConfigurations{{URL: os.Getenv("BASE_URL")}}
	api = openauth.NewAPIClient(cfg)
	ctx = context.WithValue(context.Background(), openauth.ContextAccessToken, os.Getenv("API_KEY"))

	var body openauth.WorkflowCreate
	must(json.Unmarshal([]byte(workflowJSON), &body), "workflow JSON")
	created, _, err := api.WorkflowsAPI.CreateWorkflow(ctx).WorkflowCreate(body).Execute()
	must(err, "create workflow")
	id := created.Data.Id
	fmt.Println("ok create")

	held := run(id, "hang")
	running := readUntil(id, held, openauth.RunStatus("running"))
	check(running.Output == nil && running.Error.Get() == nil, "running run: %+v", running)
	check(running.Duration.Get() == nil, "running run has a duration")
	fmt.Println("ok read running")
	waiting := run(id, "hang")
	queued := readUntil(id, waiting, openauth.RunStatus("queued"))
	check(queued.StartedAt.Get() == nil && len(queued.Logs) == 0, "queued run: %+v", queued)
	fmt.Println("ok read queued")
	_, _, err = api.WorkflowsAPI.CancelRun(ctx, id, waiting).Execute()
	must(err, "cancel queued run")
	cancelled := readUntil(id, waiting, openauth.RunStatus("cancelled"))
	check(cancelled.Error.Get() != nil && cancelled.Error.Get().Code == "cancelled", "cancelled run: %+v", cancelled)
	_, _, err = api.WorkflowsAPI.CancelRun(ctx, id, held).Execute()
	must(err, "cancel running run")
	readUntil(id, held, openauth.RunStatus("cancelled"))
	fmt.Println("ok read cancelled")
	completed := readUntil(id, run(id, "hello"), openauth.RunStatus("completed"))
	check(reflect.DeepEqual(completed.Output, map[string]any{"result": "HELLO"}), "completed output: %#v", completed.Output)
	check(completed.Error.Get() == nil && completed.Duration.Get() != nil, "completed run: %+v", completed)
	fmt.Println("ok read completed")
	failed := readUntil(id, run(id, "fail"), openauth.RunStatus("failed"))
	check(failed.Error.Get() != nil && failed.Error.Get().Code != "" && failed.Error.Get().GetNodeId() == "model", "failed run: %+v", failed)
	fmt.Println("ok read failed")
	_, err = api.WorkflowsAPI.DeleteWorkflow(ctx, id).Execute()
	must(err, "delete workflow")
	_, response, _ := api.WorkflowsAPI.GetWorkflow(ctx, id).Execute()
	check(response != nil && response.StatusCode == 404, "the deleted workflow is still there")
	fmt.Println("ok delete")
}
