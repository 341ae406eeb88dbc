// Drives the openapi-generator `typescript-fetch` client (generated with importFileExtension=.js,
// compiled with tsc next to it, in gen/, run as ES modules) through a workflow's life, in plain Node.
import { readFileSync } from 'node:fs';
import {
  Configuration,
  OpenApi,
  ResponseError,
  WorkflowsApi,
  WorkflowCreateFromJSON,
  type RunDetail,
} from './gen/index.js';

// typescript-fetch prefixes `Bearer ` for the http bearer scheme (apiKey) but not for oauth2: the
// accessToken function adds it there (docs/generators.md).
const configuration = new Configuration({
  basePath: process.env.BASE_URL,
  // A client generated from a release before 1.2.0 says which (docs/generators.md).
  ...(process.env.API_VERSION ? { headers: { 'Api-Version': process.env.API_VERSION } } : {}),
  accessToken: async (scheme?: string) =>
    scheme === 'oauth2' ? `Bearer ${process.env.ACCESS_TOKEN}` : process.env.API_KEY!,
});
const api = new WorkflowsApi(configuration);
// workflow.json (WORKFLOW_FILE), named after the generator.
const workflowJson = {
  name: 'Generated client (openapi-generator typescript-fetch)',
  ...JSON.parse(readFileSync(process.env.WORKFLOW_FILE!, 'utf8')),
};

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

async function readUntil(workflowId: string, runId: string, status: string): Promise<RunDetail> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { data } = await api.getRun({ workflowId, runId });
    if (data.status === status) return data;
    check(Date.now() < deadline, `run ${runId} is ${data.status}, not ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const me = await new OpenApi(configuration).getUserInfo();
  check(me.login.length > 0 && me.sub === String(me.id), `userinfo: ${JSON.stringify(me)}`);
  console.log('ok userinfo (oauth2, Bearer prefix)');
  const { data: workflow } = await api.createWorkflow({ workflowCreate: WorkflowCreateFromJSON(workflowJson) });
  console.log('ok create');
  const run = async (ticket: string) =>
    (await api.runWorkflow({ workflowId: workflow.id, runRequest: { inputs: { ticket } } })).data.id;

  const held = await run('hang');
  const running = await readUntil(workflow.id, held, 'running');
  check(
    running.output === null && running.error === null && running.duration === null,
    `running run: ${JSON.stringify(running)}`,
  );
  console.log('ok read running');
  const waiting = await run('hang');
  const queued = await readUntil(workflow.id, waiting, 'queued');
  check(queued.startedAt === null && queued.logs.length === 0, `queued run: ${JSON.stringify(queued)}`);
  console.log('ok read queued');
  await api.cancelRun({ workflowId: workflow.id, runId: waiting });
  const cancelled = await readUntil(workflow.id, waiting, 'cancelled');
  check(cancelled.error?.code === 'cancelled', `cancelled run: ${JSON.stringify(cancelled)}`);
  await api.cancelRun({ workflowId: workflow.id, runId: held });
  await readUntil(workflow.id, held, 'cancelled');
  console.log('ok read cancelled');
  const completed = await readUntil(workflow.id, await run('hello'), 'completed');
  check(
    JSON.stringify(completed.output) === '{"result":"HELLO"}' &&
      completed.error === null &&
      completed.duration !== null,
    `completed run: ${JSON.stringify(completed)}`,
  );
  console.log('ok read completed');
  const failed = await readUntil(workflow.id, await run('fail'), 'failed');
  check(Boolean(failed.error?.code) && failed.error?.nodeId === 'model', `failed run: ${JSON.stringify(failed)}`);
  console.log('ok read failed');
  await api.deleteWorkflow({ workflowId: workflow.id });
  const gone = await api.getWorkflow({ workflowId: workflow.id }).then(
    () => 200,
    (err: unknown) => (err instanceof ResponseError ? err.response.status : 0),
  );
  check(gone === 404, `the deleted workflow answered ${gone}`);
  console.log('ok delete');
  await later();
}

const statusOf = (err: unknown) => (err instanceof ResponseError ? err.response.status : 0);

/** What a later version added, read by a client that does not know it (scripts/generators.ts). */
async function later(): Promise<void> {
  const workflowId = process.env.LATER_WORKFLOW_ID!;
  const shown = process.env.LATER_SHOWN === '1';
  const read = await api.getWorkflow({ workflowId }).then(
    (answer) => ({ status: 200, workflow: answer.data }),
    (err: unknown) => ({ status: statusOf(err), workflow: undefined }),
  );
  if (shown) {
    check(read.status === 200, `the later workflow answered ${read.status}`);
    const types = new Set(read.workflow!.nodes.map((node) => node.type as string));
    for (const want of process.env.LATER_NODE_TYPES!.split(','))
      check(types.has(want), `node type ${want} not read: ${[...types].join(', ')}`);
    console.log('ok read a workflow with node types it does not know');
  } else {
    check(read.status === 406, `a workflow its release cannot show answered ${read.status}`);
    console.log('ok read a workflow its release cannot show: 406');
  }
  const listed = (await api.listWorkflows({})).data.some((w) => w.id === workflowId);
  check(listed === shown, 'the list and the workflow disagree');
  console.log('ok list');
  const { data: run } = await api.getRun({ workflowId, runId: process.env.LATER_RUN_ID! });
  check(run.status === 'completed' && run.logs.length === 5, `the later run: ${JSON.stringify(run)}`);
  console.log('ok read a run of it, its steps');
  const missing = await api.getWorkflow({ workflowId: 'wf_not_there' }).then(() => 200, statusOf);
  check(missing === 404, `a missing workflow answered ${missing}`);
  console.log('ok problem');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
