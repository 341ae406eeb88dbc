"""Drives the openapi-generator `python` client (package openauth_client) through a workflow's life."""
import os
import sys
import time

import openauth_client as oc
from openauth_client.models import RunRequest, WorkflowCreate

WORKFLOW = {
    "name": "Generated client (openapi-generator python)",
    "nodes": [
        {"id": "input", "type": "text_input", "config": {"variable": "ticket"}},
        {"id": "model", "type": "llm_call", "config": {"model": "fake"}},
        {"id": "result", "type": "text_output", "config": {"format": "plain"}},
    ],
    "edges": [{"from": "input", "to": "model"}, {"from": "model", "to": "result"}],
}

api = oc.WorkflowsApi(oc.ApiClient(oc.Configuration(host=os.environ["BASE_URL"], access_token=os.environ["API_KEY"])))


def step(name: str) -> None:
    print(f"ok {name}", flush=True)


def read_until(workflow_id: str, run_id: str, status: str):
    deadline = time.time() + 30
    while True:
        run = api.get_run(workflow_id, run_id).data
        if run.status.value == status:
            return run
        if time.time() > deadline:
            sys.exit(f"run {run_id} is {run.status.value}, not {status}")
        time.sleep(0.1)


workflow = api.create_workflow(workflow_create=WorkflowCreate.from_dict(WORKFLOW)).data
step("create")
run = lambda text: api.run_workflow(workflow.id, run_request=RunRequest(inputs={"ticket": text})).data  # noqa: E731

held = run("hang")
running = read_until(workflow.id, held.id, "running")
assert running.output is None and running.error is None and running.duration is None, running
step("read running")
waiting = run("hang")
queued = read_until(workflow.id, waiting.id, "queued")
assert queued.started_at is None and queued.logs == [], queued
step("read queued")
api.cancel_run(workflow.id, waiting.id)
cancelled = read_until(workflow.id, waiting.id, "cancelled")
assert cancelled.error.code == "cancelled", cancelled
api.cancel_run(workflow.id, held.id)
read_until(workflow.id, held.id, "cancelled")
step("read cancelled")
completed = read_until(workflow.id, run("hello").id, "completed")
assert completed.output == {"result": "HELLO"} and completed.error is None and completed.duration >= 0, completed
step("read completed")
failed = read_until(workflow.id, run("fail").id, "failed")
assert failed.error.code and failed.error.node_id == "model", failed
step("read failed")
api.delete_workflow(workflow.id)
try:
    api.get_workflow(workflow.id)
    sys.exit("the deleted workflow is still there")
except oc.ApiException as err:
    assert err.status == 404, err
step("delete")
