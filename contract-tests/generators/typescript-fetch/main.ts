// Drives the openapi-generator `typescript-fetch` client (compiled with tsc next to it, in gen/)
// through a workflow's life, in plain Node.
import { readFileSync } from 'node:fs';
import { Configuration, ResponseError, WorkflowsApi, RunStatus, WorkflowCreateFromJSON, type RunDetail } from './gen/index';

const api = new WorkflowsApi(new Configuration({ basePath: process.env.BASE_URL, accessToken: process.env.API_KEY }));
// workflow.json (WORKFLOW_FILE), named after the generator.
const workflowJson = { name: 'Generated client (openapi-generator typescript-fetch)', ...JSON.parse(readFileSync(process.env.WORKFLOW_FILE!, 'utf8')) };

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

async function readUntil(workflowId: string, runId: string, status: RunStatus): Promise<RunDetail> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { data } = await api.getRun({ workflowId, runId });
    if (data.status === status) return data;
    check(Date.now() < deadline, `run ${runId} is ${data.status}, not ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const { data: workflow } = await api.createWorkflow({ workflowCreate: WorkflowCreateFromJSON(workflowJson) });
  console.log('ok create');
  const run = async (ticket: string) => (await api.runWorkflow({ workflowId: workflow.id, runRequest: { inputs: { ticket } } })).data.id;

  const held = await run('hang');
  const running = await readUntil(workflow.id, held, RunStatus.Running);
  check(running.output === null && running.error === null && running.duration === null, `running run: ${JSON.stringify(running)}`);
  console.log('ok read running');
  const waiting = await run('hang');
  const queued = await readUntil(workflow.id, waiting, RunStatus.Queued);
  check(queued.startedAt === null && queued.logs.length === 0, `queued run: ${JSON.stringify(queued)}`);
  console.log('ok read queued');
  await api.cancelRun({ workflowId: workflow.id, runId: waiting });
  const cancelled = await readUntil(workflow.id, waiting, RunStatus.Cancelled);
  check(cancelled.error?.code === 'cancelled', `cancelled run: ${JSON.stringify(cancelled)}`);
  await api.cancelRun({ workflowId: workflow.id, runId: held });
  await readUntil(workflow.id, held, RunStatus.Cancelled);
  console.log('ok read cancelled');
  const completed = await readUntil(workflow.id, await run('hello'), RunStatus.Completed);
  check(JSON.stringify(completed.output) === '{"result":"HELLO"}' && completed.error === null && completed.duration !== null, `completed run: ${JSON.stringify(completed)}`);
  console.log('ok read completed');
  const failed = await readUntil(workflow.id, await run('fail'), RunStatus.Failed);
  check(Boolean(failed.error?.code) && failed.error?.nodeId === 'model', `failed run: ${JSON.stringify(failed)}`);
  console.log('ok read failed');
  await api.deleteWorkflow({ workflowId: workflow.id });
  const gone = await api.getWorkflow({ workflowId: workflow.id }).then(
    () => 200,
    (err: unknown) => (err instanceof ResponseError ? err.response.status : 0),
  );
  check(gone === 404, `the deleted workflow answered ${gone}`);
  console.log('ok delete');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
