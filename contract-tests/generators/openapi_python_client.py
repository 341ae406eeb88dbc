"""Drives the openapi-python-client client (package openauth_opc) through a workflow's life."""
import os
import sys

from openauth_opc import AuthenticatedClient
from openauth_opc.api.workflows import cancel_run, create_workflow, delete_workflow, get_run, get_workflow, list_workflows, run_workflow
from openauth_opc.models import Problem, RunRequest, WorkflowCreate
from scenario import drive, later, workflow

# A client generated from a release before 1.2.0 says which (docs/generators.md).
version = {"Api-Version": os.environ["API_VERSION"]} if "API_VERSION" in os.environ else {}
client = AuthenticatedClient(base_url=os.environ["BASE_URL"], token=os.environ["API_KEY"], headers=version)


def read_workflow(workflow_id: str):
    answer = get_workflow.sync_detailed(workflow_id, client=client)
    return answer.status_code, answer.parsed.data.to_dict() if answer.status_code == 200 else None


def read(workflow_id: str, run_id: str):
    answer = get_run.sync(workflow_id, run_id, client=client)
    if isinstance(answer, Problem) or answer is None:
        sys.exit(f"get_run answered {answer}")
    return answer.data


drive(
    create=lambda: create_workflow.sync(client=client, body=WorkflowCreate.from_dict(workflow("openapi-python-client"))).data.id,
    run=lambda wid, text: run_workflow.sync(wid, client=client, body=RunRequest.from_dict({"inputs": {"ticket": text}})).data.id,
    read=read,
    cancel=lambda wid, rid: cancel_run.sync(wid, rid, client=client),
    delete=lambda wid: delete_workflow.sync_detailed(wid, client=client),
    found=lambda wid: get_workflow.sync_detailed(wid, client=client).status_code != 404,
)
later(
    read_workflow=read_workflow,
    list_ids=lambda: [w.id for w in list_workflows.sync(client=client).data],
    read_run=read,
    missing=lambda: get_workflow.sync_detailed("wf_not_there", client=client).status_code,
)
