"""The life of a workflow that each Python driver walks with its own generated client (README.md)."""
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable


def workflow(generator: str) -> dict:
    """The three-node workflow of workflow.json, named after the generator."""
    return {"name": f"Generated client ({generator})", **json.loads((Path(__file__).parent / "workflow.json").read_text())}


def step(name: str) -> None:
    print(f"ok {name}", flush=True)


def drive(
    create: Callable[[], str],
    run: Callable[[str, str], str],
    read: Callable[[str, str], Any],
    cancel: Callable[[str, str], None],
    delete: Callable[[str], None],
    found: Callable[[str], bool],
) -> None:
    """create() -> workflow id; run(workflow, text) -> run id; read(workflow, run) -> the run;
    cancel(workflow, run); delete(workflow); found(workflow) -> whether it can still be read."""

    def read_until(workflow_id: str, run_id: str, status: str):
        deadline = time.time() + 30
        while True:
            answer = read(workflow_id, run_id)
            if answer.status == status:  # an open enum: a plain string in every generated client
                return answer
            if time.time() > deadline:
                sys.exit(f"run {run_id} is {answer.status}, not {status}")
            time.sleep(0.1)

    workflow_id = create()
    step("create")
    held = run(workflow_id, "hang")
    running = read_until(workflow_id, held, "running")
    assert running.output is None and running.error is None and running.duration is None, running
    step("read running")
    waiting = run(workflow_id, "hang")
    queued = read_until(workflow_id, waiting, "queued")
    assert queued.started_at is None and queued.logs == [], queued
    step("read queued")
    cancel(workflow_id, waiting)
    cancelled = read_until(workflow_id, waiting, "cancelled")
    assert cancelled.error.code == "cancelled", cancelled
    cancel(workflow_id, held)
    read_until(workflow_id, held, "cancelled")
    step("read cancelled")
    completed = read_until(workflow_id, run(workflow_id, "hello"), "completed")
    assert completed.output == {"result": "HELLO"} and completed.error is None and completed.duration >= 0, completed
    step("read completed")
    failed = read_until(workflow_id, run(workflow_id, "fail"), "failed")
    assert failed.error.code and failed.error.node_id == "model", failed
    step("read failed")
    delete(workflow_id)
    assert not found(workflow_id), "the deleted workflow is still there"
    step("delete")


def later(
    read_workflow: Callable[[str], tuple[int, Any]],
    list_ids: Callable[[], list[str]],
    read_run: Callable[[str, str], Any],
    missing: Callable[[], int],
) -> None:
    """What a later version added, read by a client that does not know it (scripts/generators.ts):
    read_workflow(id) -> (status, the workflow as a dict); list_ids() -> the ids of the first page;
    read_run(workflow, run) -> the run; missing() -> the status of a workflow that is not there."""
    workflow_id, run_id = os.environ["LATER_WORKFLOW_ID"], os.environ["LATER_RUN_ID"]
    shown = os.environ["LATER_SHOWN"] == "1"
    status, answer = read_workflow(workflow_id)
    if shown:
        assert status == 200, status
        types = {node["type"] for node in answer["nodes"]}
        assert set(os.environ["LATER_NODE_TYPES"].split(",")) <= types, types
        step("read a workflow with node types it does not know")
    else:
        assert status == 406, status
        step("read a workflow its release cannot show: 406")
    assert (workflow_id in list_ids()) == shown, "the list and the workflow disagree"
    step("list")
    run = read_run(workflow_id, run_id)
    assert run.status == "completed" and len(run.logs) == 5, run
    step("read a run of it, its steps")
    assert missing() == 404
    step("problem")
