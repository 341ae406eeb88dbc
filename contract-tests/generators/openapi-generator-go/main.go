// Drives the openapi-generator `go` client (module github.com/openauth/client) through a workflow's life.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"

	openauth "github.com/openauth/client"
)

var (
	api *openauth.APIClient
	ctx context.Context
)

func readRun(workflowID, runID, status string) openauth.RunDetail {
	return readUntil(runID, status, func() (openauth.RunDetail, string) {
		envelope, _, err := api.WorkflowsAPI.GetRun(ctx, workflowID, runID).Execute()
		must(err, "get run")
		return envelope.Data, string(envelope.Data.Status)
	})
}

func run(workflowID, text string) string {
	// From JSON: the type of `inputs` differs between releases (1.0.0's were strings only).
	var body openauth.RunRequest
	must(json.Unmarshal(runRequestJSON(text), &body), "run request JSON")
	envelope, _, err := api.WorkflowsAPI.RunWorkflow(ctx, workflowID).RunRequest(body).Execute()
	must(err, "run workflow")
	return envelope.Data.Id
}

func main() {
	cfg := openauth.NewConfiguration()
	cfg.Servers = openauth.ServerConfigurations{{URL: os.Getenv("BASE_URL")}}
	// A client generated from a release before 1.2.0 says which (docs/generators.md).
	if version := os.Getenv("API_VERSION"); version != "" {
		cfg.AddDefaultHeader("Api-Version", version)
	}
	api = openauth.NewAPIClient(cfg)
	ctx = context.WithValue(context.Background(), openauth.ContextAccessToken, os.Getenv("API_KEY"))

	var body openauth.WorkflowCreate
	must(json.Unmarshal(workflowJSON("openapi-generator go"), &body), "workflow JSON")
	created, _, err := api.WorkflowsAPI.CreateWorkflow(ctx).WorkflowCreate(body).Execute()
	must(err, "create workflow")
	id := created.Data.Id
	fmt.Println("ok create")

	held := run(id, "hang")
	running := readRun(id, held, "running")
	check(running.Output == nil && running.Error.Get() == nil, "running run: %+v", running)
	check(running.Duration.Get() == nil, "running run has a duration")
	fmt.Println("ok read running")
	waiting := run(id, "hang")
	queued := readRun(id, waiting, "queued")
	check(queued.StartedAt.Get() == nil && len(queued.Logs) == 0, "queued run: %+v", queued)
	fmt.Println("ok read queued")
	_, _, err = api.WorkflowsAPI.CancelRun(ctx, id, waiting).Execute()
	must(err, "cancel queued run")
	cancelled := readRun(id, waiting, "cancelled")
	check(cancelled.Error.Get() != nil && cancelled.Error.Get().Code == "cancelled", "cancelled run: %+v", cancelled)
	_, _, err = api.WorkflowsAPI.CancelRun(ctx, id, held).Execute()
	must(err, "cancel running run")
	readRun(id, held, "cancelled")
	fmt.Println("ok read cancelled")
	completed := readRun(id, run(id, "hello"), "completed")
	check(reflect.DeepEqual(completed.Output, map[string]any{"result": "HELLO"}), "completed output: %#v", completed.Output)
	check(completed.Error.Get() == nil && completed.Duration.Get() != nil, "completed run: %+v", completed)
	fmt.Println("ok read completed")
	failed := readRun(id, run(id, "fail"), "failed")
	check(failed.Error.Get() != nil && failed.Error.Get().Code != "" && failed.Error.Get().GetNodeId() == "model", "failed run: %+v", failed)
	fmt.Println("ok read failed")
	_, err = api.WorkflowsAPI.DeleteWorkflow(ctx, id).Execute()
	must(err, "delete workflow")
	_, response, _ := api.WorkflowsAPI.GetWorkflow(ctx, id).Execute()
	check(response != nil && response.StatusCode == 404, "the deleted workflow is still there")
	fmt.Println("ok delete")

	statusOf := func(response *http.Response) int {
		if response == nil {
			return 0
		}
		return response.StatusCode
	}
	later(
		func(id string) (int, any) {
			envelope, response, _ := api.WorkflowsAPI.GetWorkflow(ctx, id).Execute()
			if envelope == nil {
				return statusOf(response), nil
			}
			return statusOf(response), envelope.Data
		},
		func() []string {
			page, _, err := api.WorkflowsAPI.ListWorkflows(ctx).Execute()
			must(err, "list workflows")
			ids := []string{}
			for _, w := range page.Data {
				ids = append(ids, w.Id)
			}
			return ids
		},
		func(workflowID, runID string) (string, int) {
			envelope, _, err := api.WorkflowsAPI.GetRun(ctx, workflowID, runID).Execute()
			must(err, "get the later run")
			return string(envelope.Data.Status), len(envelope.Data.Logs)
		},
		func() int {
			_, response, _ := api.WorkflowsAPI.GetWorkflow(ctx, "wf_not_there").Execute()
			return statusOf(response)
		},
	)
}
