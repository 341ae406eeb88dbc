// Drives the oapi-codegen client (types and client with responses) through a workflow's life.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"

	"driver/client"
)

var (
	api *client.ClientWithResponses
	ctx = context.Background()
)

func readRun(workflowID, runID, status string) client.RunDetail {
	return readUntil(runID, status, func() (client.RunDetail, string) {
		answer, err := api.GetRunWithResponse(ctx, workflowID, runID, nil)
		must(err, "get run")
		check(answer.JSON200 != nil, "get run answered %d: %s", answer.StatusCode(), answer.Body)
		return answer.JSON200.Data, string(answer.JSON200.Data.Status)
	})
}

func run(workflowID, text string) string {
	answer, err := api.RunWorkflowWithResponse(ctx, workflowID, nil, client.RunRequest{Inputs: map[string]interface{}{"ticket": text}})
	must(err, "run workflow")
	check(answer.JSON202 != nil, "run answered %d: %s", answer.StatusCode(), answer.Body)
	return answer.JSON202.Data.Id
}

func main() {
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+os.Getenv("API_KEY"))
		return nil
	}
	var err error
	api, err = client.NewClientWithResponses(os.Getenv("BASE_URL"), client.WithRequestEditorFn(bearer))
	must(err, "client")

	var body client.WorkflowCreate
	must(json.Unmarshal(workflowJSON("oapi-codegen"), &body), "workflow JSON")
	created, err := api.CreateWorkflowWithResponse(ctx, body)
	must(err, "create workflow")
	check(created.JSON201 != nil, "create answered %d: %s", created.StatusCode(), created.Body)
	id := created.JSON201.Data.Id
	fmt.Println("ok create")

	held := run(id, "hang")
	running := readRun(id, held, "running")
	check(running.Output == nil && running.Error == nil && running.Duration == nil, "running run: %+v", running)
	fmt.Println("ok read running")
	waiting := run(id, "hang")
	queued := readRun(id, waiting, "queued")
	check(queued.StartedAt == nil && len(queued.Logs) == 0, "queued run: %+v", queued)
	fmt.Println("ok read queued")
	_, err = api.CancelRunWithResponse(ctx, id, waiting)
	must(err, "cancel queued run")
	cancelled := readRun(id, waiting, "cancelled")
	check(cancelled.Error != nil && cancelled.Error.Code == "cancelled", "cancelled run: %+v", cancelled)
	_, err = api.CancelRunWithResponse(ctx, id, held)
	must(err, "cancel running run")
	readRun(id, held, "cancelled")
	fmt.Println("ok read cancelled")
	completed := readRun(id, run(id, "hello"), "completed")
	check(reflect.DeepEqual(completed.Output, map[string]any{"result": "HELLO"}), "completed output: %#v", completed.Output)
	check(completed.Error == nil && completed.Duration != nil, "completed run: %+v", completed)
	fmt.Println("ok read completed")
	failed := readRun(id, run(id, "fail"), "failed")
	check(failed.Error != nil && failed.Error.Code != "" && failed.Error.NodeId != nil && *failed.Error.NodeId == "model", "failed run: %+v", failed)
	fmt.Println("ok read failed")
	deleted, err := api.DeleteWorkflowWithResponse(ctx, id, nil)
	must(err, "delete workflow")
	check(deleted.StatusCode() == 204, "delete answered %d", deleted.StatusCode())
	gone, err := api.GetWorkflowWithResponse(ctx, id)
	must(err, "read deleted workflow")
	check(gone.StatusCode() == 404, "the deleted workflow answered %d", gone.StatusCode())
	fmt.Println("ok delete")
}
