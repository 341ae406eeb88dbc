"""Drives the openapi-generator `python` client (package openauth_client) through a workflow's life."""
import os

import openauth_client as oc
from openauth_client.models import RunRequest, WorkflowCreate
from scenario import drive, later, workflow

# A client generated from a release before 1.2.0 says which (docs/generators.md).
version = {"header_name": "Api-Version", "header_value": os.environ["API_VERSION"]} if "API_VERSION" in os.environ else {}
api = oc.WorkflowsApi(oc.ApiClient(oc.Configuration(host=os.environ["BASE_URL"], access_token=os.environ["API_KEY"]), **version))


def status_of(call):
    try:
        return 200, call()
    except oc.ApiException as err:
        return err.status, None


def found(workflow_id: str) -> bool:
    status, _ = status_of(lambda: api.get_workflow(workflow_id))
    assert status in (200, 404), status
    return status == 200


drive(
    create=lambda: api.create_workflow(workflow_create=WorkflowCreate.from_dict(workflow("openapi-generator python"))).data.id,
    run=lambda wid, text: api.run_workflow(wid, run_request=RunRequest(inputs={"ticket": text})).data.id,
    read=lambda wid, rid: api.get_run(wid, rid).data,
    cancel=lambda wid, rid: api.cancel_run(wid, rid),
    delete=lambda wid: api.delete_workflow(wid),
    found=found,
)
later(
    read_workflow=lambda wid: status_of(lambda: api.get_workflow(wid).data.to_dict()),
    list_ids=lambda: [w.id for w in api.list_workflows().data],
    read_run=lambda wid, rid: api.get_run(wid, rid).data,
    missing=lambda: status_of(lambda: api.get_workflow("wf_not_there"))[0],
)
