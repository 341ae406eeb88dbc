"""Drives the openapi-python-client client (package openauth_opc) through a workflow's life."""
import os
import sys
import time

from openauth_opc import AuthenticatedClient
from openauth_opc.api.workflows import cancel_run, create_workflow, delete_workflow, get_run, get_workflow, run_workflow
from openauth_opc.models import Problem, RunRequest, WorkflowCreate

WORKFLOW = {
    "name": "Generated client (openapi-python-client)",
    "nodes": [
        {"id": "input", "type": "text_input", "config": {"variable": "ticket"}},
        {"id": "model", "type": "llm_call", "config": {"model": "fake"}},
        {"id": "result", "type": "text_output", "config": {"format": "plain"}},
    ],
    "edges": [{"from": "input", "to": "model"}, {"from": "model", "to": "result"}],
}

client = AuthenticatedClient(base_url=os.environ["BASE_URL"], token=os.environ["API_KEY"])


def step(name: str) -> None:
    print(f"ok {name}", flush=True)


def read_until(workflow_id: str, run_id: str, status: str):
    deadline = time.time() + 30
    while True:
        answer = get_run.sync(workflow_id, run_id, client=client)
        if isinstance(answer, Problem) or answer is None:
            sys.exit(f"get_run answered {answer}")
        if answer.data.status.value == status:
            return answer.data
        if time.time() > deadline:
            sys.exit(f"run {run_id} is {answer.data.status.value}, not {status}")
        time.sleep(0.1)


workflow = create_workflow.sync(client=client, body=WorkflowCreate.from_dict(WORKFLOW)).data
step("create")


def run(text: str):
    return run_workflow.sync(workflow.id, client=client, body=RunRequest.from_dict({"inputs": {"ticket": text}})).data


held = run("hang")
running = read_until(workflow.id, held.id, "running")
assert running.output is None and running.error is None and running.duration is None, running
step("read running")
waiting = run("hang")
queued = read_until(workflow.id, waiting.id, "queued")
assert queued.started_at is None and queued.logs == [], queued
step("read queued")
cancel_run.sync(workflow.id, waiting.id, client=client)
cancelled = read_until(workflow.id, waiting.id, "cancelled")
assert cancelled.error.code == "cancelled", cancelled
cancel_run.sync(workflow.id, held.id, client=client)
read_until(workflow.id, held.id, "cancelled")
step("read cancelled")
completed = read_until(workflow.id, run("hello").id, "completed")
assert completed.output == {"result": "HELLO"} and completed.error is None and completed.duration >= 0, completed
step("read completed")
failed = read_until(workflow.id, run("fail").id, "failed")
assert failed.error.code and failed.error.node_id == "model", failed
step("read failed")
delete_workflow.sync_detailed(workflow.id, client=client)
gone = get_workflow.sync_detailed(workflow.id, client=client)
assert gone.status_code == 404, gone.status_code
step("delete")
