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
	// From JSON: the type of `inputs` differs between releases (1.0.0's were strings only).
	var body client.RunRequest
	must(json.Unmarshal(runRequestJSON(text), &body), "run request JSON")
	answer, err := api.RunWorkflowWithResponse(ctx, workflowID, nil, body)
	must(err, "run workflow")
	check(answer.JSON202 != nil, "run answered %d: %s", answer.StatusCode(), answer.Body)
	return answer.JSON202.Data.Id
}

func main() {
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+os.Getenv("API_KEY"))
		// A client generated from a release before 1.2.0 says which (docs/generators.md).
		if version := os.Getenv("API_VERSION"); version != "" {
			req.Header.Set("Api-Version", version)
		}
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
	check(deleteWorkflow(id) == 204, "delete answered other than 204")
	gone, err := api.GetWorkflowWithResponse(ctx, id)
	must(err, "read deleted workflow")
	check(gone.StatusCode() == 404, "the deleted workflow answered %d", gone.StatusCode())
	fmt.Println("ok delete")

	later(
		func(id string) (int, any) {
			answer, err := api.GetWorkflowWithResponse(ctx, id)
			must(err, "read the later workflow")
			if answer.JSON200 == nil {
				return answer.StatusCode(), nil
			}
			return answer.StatusCode(), answer.JSON200.Data
		},
		func() []string {
			answer, err := api.ListWorkflowsWithResponse(ctx, &client.ListWorkflowsParams{})
			must(err, "list workflows")
			check(answer.JSON200 != nil, "list answered %d: %s", answer.StatusCode(), answer.Body)
			ids := []string{}
			for _, w := range answer.JSON200.Data {
				ids = append(ids, w.Id)
			}
			return ids
		},
		func(workflowID, runID string) (string, int) {
			answer, err := api.GetRunWithResponse(ctx, workflowID, runID, nil)
			must(err, "get the later run")
			check(answer.JSON200 != nil, "get run answered %d: %s", answer.StatusCode(), answer.Body)
			return string(answer.JSON200.Data.Status), len(answer.JSON200.Data.Logs)
		},
		func() int {
			answer, err := api.GetWorkflowWithResponse(ctx, "wf_not_there")
			must(err, "read a missing workflow")
			return answer.StatusCode()
		},
	)
}

// deleteWorkflow answers DeleteWorkflowWithResponse's status: from 1.1.0 on it also takes
// If-Match's params, so the driver calls it by reflection to build against every release.
func deleteWorkflow(id string) int {
	method := reflect.ValueOf(api).MethodByName("DeleteWorkflowWithResponse")
	args := []reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(id)}
	if method.Type().NumIn() > 3 {
		args = append(args, reflect.Zero(method.Type().In(2)))
	}
	out := method.Call(args)
	if !out[1].IsNil() {
		must(out[1].Interface().(error), "delete workflow")
	}
	return out[0].MethodByName("StatusCode").Call(nil)[0].Interface().(int)
}
