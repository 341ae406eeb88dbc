// Shared by the two Go drivers: scripts/generators.ts copies it next to each one's main.go.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// must stops the driver on an error, with the answer's body when the client kept one.
func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		if e, ok := err.(interface{ Body() []byte }); ok {
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

// workflowJSON is workflow.json (WORKFLOW_FILE), named after the generator.
func workflowJSON(generator string) []byte {
	raw, err := os.ReadFile(os.Getenv("WORKFLOW_FILE"))
	must(err, "workflow file")
	var body map[string]any
	must(json.Unmarshal(raw, &body), "workflow JSON")
	body["name"] = "Generated client (" + generator + ")"
	out, err := json.Marshal(body)
	must(err, "workflow JSON")
	return out
}

// runRequestJSON is a run request with the input `ticket`.
func runRequestJSON(ticket string) []byte {
	out, err := json.Marshal(map[string]any{"inputs": map[string]string{"ticket": ticket}})
	must(err, "run request JSON")
	return out
}

// readUntil reads the run until its status is `want`, for 30 s at most; read answers the run and its status.
func readUntil[Run any](runID, want string, read func() (Run, string)) Run {
	deadline := time.Now().Add(30 * time.Second)
	for {
		run, status := read()
		if status == want {
			return run
		}
		check(time.Now().Before(deadline), "run %s is %s, not %s", runID, status, want)
		time.Sleep(100 * time.Millisecond)
	}
}

// later reads what a later version added with a client that does not know it (scripts/generators.ts):
// readWorkflow answers the status and the workflow; listIDs the ids of the first page; readRun the
// run's status and its number of steps; missing the status of a workflow that is not there.
func later(readWorkflow func(string) (int, any), listIDs func() []string, readRun func(string, string) (string, int), missing func() int) {
	workflowID, runID := os.Getenv("LATER_WORKFLOW_ID"), os.Getenv("LATER_RUN_ID")
	shown := os.Getenv("LATER_SHOWN") == "1"
	status, workflow := readWorkflow(workflowID)
	if shown {
		check(status == 200, "read the later workflow: %d", status)
		raw, err := json.Marshal(workflow)
		must(err, "workflow JSON")
		var read struct {
			Nodes []struct {
				Type string `json:"type"`
			} `json:"nodes"`
		}
		must(json.Unmarshal(raw, &read), "workflow JSON")
		types := map[string]bool{}
		for _, node := range read.Nodes {
			types[node.Type] = true
		}
		for _, want := range strings.Split(os.Getenv("LATER_NODE_TYPES"), ",") {
			check(types[want], "node type %s not read: %v", want, types)
		}
		fmt.Println("ok read a workflow with node types it does not know")
	} else {
		check(status == 406, "a workflow its release cannot show answered %d", status)
		fmt.Println("ok read a workflow its release cannot show: 406")
	}
	listed := false
	for _, id := range listIDs() {
		listed = listed || id == workflowID
	}
	check(listed == shown, "the list and the workflow disagree")
	fmt.Println("ok list")
	runStatus, steps := readRun(workflowID, runID)
	check(runStatus == "completed" && steps == 5, "the later run: %s, %d steps", runStatus, steps)
	fmt.Println("ok read a run of it, its steps")
	check(missing() == 404, "a missing workflow answered %d", missing())
	fmt.Println("ok problem")
}
