// Shared by the two Go drivers: scripts/generators.ts copies it next to each one's main.go.
package main

import (
	"encoding/json"
	"fmt"
	"os"
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
