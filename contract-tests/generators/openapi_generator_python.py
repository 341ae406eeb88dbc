"""Drives the openapi-generator `python` client (package openauth_client) through a workflow's life."""
import os

import openauth_client as oc
from openauth_client.models import RunRequest, WorkflowCreate
from scenario import drive, workflow

api = oc.WorkflowsApi(oc.ApiClient(oc.Configuration(host=os.environ["BASE_URL"], access_token=os.environ["API_KEY"])))


def found(workflow_id: str) -> bool:
    try:
        api.get_workflow(workflow_id)
        return True
    except oc.ApiException as err:
        assert err.status == 404, err
        return False


drive(
    create=lambda: api.create_workflow(workflow_create=WorkflowCreate.from_dict(workflow("openapi-generator python"))).data.id,
    run=lambda wid, text: api.run_workflow(wid, run_request=RunRequest(inputs={"ticket": text})).data.id,
    read=lambda wid, rid: api.get_run(wid, rid).data,
    cancel=lambda wid, rid: api.cancel_run(wid, rid),
    delete=lambda wid: api.delete_workflow(wid),
    found=found,
)
