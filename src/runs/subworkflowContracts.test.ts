// A call of another workflow fills exactly that workflow's run inputs, through a real HTTP server,
// store and queue: a `workflow` node mapping a name the callee (at the version it pins, else its
// current one) has no input of, or leaving one of its inputs unmapped, is a 422 at save, as is a
// `map` whose workflow does not take its item; a callee changed since the save fails the node at
// run time with subworkflow_inputs_mismatch, and never runs on the caller's upstream text instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../client/src/index.ts';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { workflowsClient } from '../../test/support/workflowUsers.ts';

type Node = Schemas['WorkflowNode'];
type Edge = Schemas['WorkflowEdge'];

/** A workflow reading the run inputs `variables`, its output a template that frames each. */
function framing(...variables: string[]): { nodes: Node[]; edges: Edge[] } {
  const template = variables.map((v) => `<${v}={{ inputs.${v} }}>`).join('');
  return {
    nodes: [
      ...variables.map((variable): Node => ({ id: `in_${variable}`, type: 'text_input', config: { variable } })),
      { id: 'frame', type: 'template', config: { template } },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [...variables.map((v): Edge => ({ from: `in_${v}`, to: 'frame' })), { from: 'frame', to: 'out' }],
  };
}

/** A caller of `call` (a workflow or map node given its id `call`), from the run input `doc`, through a split for a map. */
function caller(call: Node): { nodes: Node[]; edges: Edge[] } {
  if (call.type === 'map')
    return {
      nodes: [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        { id: 'parts', type: 'split', config: { by: 'separator', separator: ';' } },
        call,
        { id: 'result', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [
        { from: 'doc', to: 'parts' },
        { from: 'parts', to: 'call' },
        { from: 'call', to: 'result' },
      ],
    };
  return {
    nodes: [
      { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
      call,
      { id: 'result', type: 'text_output', config: { format: 'plain' } },
    ],
    edges: [
      { from: 'doc', to: 'call' },
      { from: 'call', to: 'result' },
    ],
  };
}

describe.each(testDialects())('sub-workflow input contracts on %s', (dialect) => {
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    server = await startTestServer({ dialect, runs: true });
    alice = await workflowsClient(server.ctx, server.baseUrl, 'alice');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function save(name: string, graph: { nodes: Node[]; edges: Edge[] }) {
    const { data, error, response } = await alice.POST('/api/workflows', { body: { name, ...graph } });
    return { id: data?.data.id ?? '', error, status: response.status };
  }

  async function rename(id: string, graph: { nodes: Node[]; edges: Edge[] }) {
    const { response } = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: id } },
      body: graph,
    });
    expect(response.status).toBe(200);
  }

  async function runToEnd(workflowId: string, inputs: Record<string, string>) {
    const { data, error } = await alice.POST('/api/workflows/{workflow_id}/run', {
      params: { path: { workflow_id: workflowId }, header: { Prefer: 'wait=20' } },
      body: { inputs },
    });
    if (!data) throw new Error(`run failed: ${JSON.stringify(error)}`);
    return data.data;
  }

  it('a workflow node mapping a name the callee lacks, or leaving one of its inputs unmapped, is a 422 at save', async () => {
    const callee = await save('two inputs', framing('ticket', 'lang'));
    const call = (inputs: Record<string, string>): Node => ({
      id: 'call',
      type: 'workflow',
      config: { workflow_id: callee.id, inputs },
    });
    const unknown = await save('maps a stranger', caller(call({ ticket: '{{ inputs.doc }}', lang: 'en', tone: 'x' })));
    expect(unknown.status).toBe(422);
    expect(unknown.error).toMatchObject({
      code: 'invalid_workflow',
      errors: [
        {
          pointer: '/nodes/1/config/inputs/tone',
          message: `maps "tone", which is no input of workflow "${callee.id}": its inputs are "ticket", "lang"`,
        },
      ],
    });
    const unmapped = await save('forgets lang', caller(call({ ticket: '{{ inputs.doc }}' })));
    expect(unmapped.status).toBe(422);
    expect(unmapped.error).toMatchObject({
      errors: [
        {
          pointer: '/nodes/1/config/inputs',
          message: `leaves the input "lang" of workflow "${callee.id}" unmapped: its inputs are "ticket", "lang", and each needs a value`,
        },
      ],
    });
    // The same graph through an update is refused the same way, and nothing is saved.
    const fine = await save('maps both', caller(call({ ticket: '{{ inputs.doc }}', lang: 'en' })));
    expect(fine.status).toBe(201);
    const patched = await alice.PATCH('/api/workflows/{workflow_id}', {
      params: { path: { workflow_id: fine.id } },
      body: caller(call({ ticket: '{{ inputs.doc }}' })),
    });
    expect(patched.response.status).toBe(422);
    expect(patched.error).toMatchObject({ errors: [{ pointer: '/nodes/1/config/inputs' }] });
  });

  it('checks a pinned call against the version it pins, an unpinned one against the current version', async () => {
    const callee = await save('renamed later', framing('ticket'));
    await rename(callee.id, framing('body'));
    const call = (version?: number): Node => ({
      id: 'call',
      type: 'workflow',
      config: {
        workflow_id: callee.id,
        ...(version !== undefined && { version }),
        inputs: { ticket: '{{ inputs.doc }}' },
      },
    });
    const pinnedToOld = await save('pinned to v1', caller(call(1)));
    expect(pinnedToOld.status).toBe(201);
    expect((await runToEnd(pinnedToOld.id, { doc: 'x' })).output).toEqual({ result: '<ticket=x>' });
    const pinnedToNew = await save('pinned to v2', caller(call(2)));
    expect(pinnedToNew.status).toBe(422);
    expect(pinnedToNew.error).toMatchObject({
      errors: [
        {
          pointer: '/nodes/1/config/inputs/ticket',
          message: `maps "ticket", which is no input of workflow "${callee.id}" at version 2: its inputs are "body"`,
        },
        {
          pointer: '/nodes/1/config/inputs',
          message: `leaves the input "body" of workflow "${callee.id}" at version 2 unmapped: its inputs are "body", and each needs a value`,
        },
      ],
    });
    const unpinned = await save('unpinned', caller(call()));
    expect(unpinned.status).toBe(422);
    expect(unpinned.error).toMatchObject({
      errors: [{ pointer: '/nodes/1/config/inputs/ticket' }, { pointer: '/nodes/1/config/inputs' }],
    });
  });

  it('a map calling a workflow that does not take its item, or takes more, is a 422 at save', async () => {
    const byChunk = await save('reads chunk', framing('chunk'));
    const withIndex = await save('reads item and index', framing('item', 'index'));
    const extra = await save('reads item and lang', framing('item', 'lang'));
    const map = (workflowId: string, itemVariable?: string, version?: number): Node => ({
      id: 'call',
      type: 'map',
      config: {
        workflow_id: workflowId,
        ...(itemVariable !== undefined && { item_variable: itemVariable }),
        ...(version !== undefined && { workflow_version: version }),
      },
    });
    const noItem = await save('default item', caller(map(byChunk.id)));
    expect(noItem.status).toBe(422);
    expect(noItem.error).toMatchObject({
      errors: [
        {
          pointer: '/nodes/2/config/workflow_id',
          message: `maps "item", which is no input of workflow "${byChunk.id}": its inputs are "chunk"`,
        },
        { pointer: '/nodes/2/config/workflow_id', message: expect.stringContaining('leaves the input "chunk"') },
      ],
    });
    const wrongName = await save('named item', caller(map(byChunk.id, 'piece', 1)));
    expect(wrongName.error).toMatchObject({
      errors: [
        {
          pointer: '/nodes/2/config/item_variable',
          message: `maps "piece", which is no input of workflow "${byChunk.id}" at version 1: its inputs are "chunk"`,
        },
        { pointer: '/nodes/2/config/workflow_id' },
      ],
    });
    const more = await save('too many', caller(map(extra.id)));
    expect(more.error).toMatchObject({
      errors: [{ pointer: '/nodes/2/config/workflow_id', message: expect.stringContaining('leaves the input "lang"') }],
    });
    // What a map fills still works: its item under item_variable, and its index.
    const chunks = await save('chunks', caller(map(byChunk.id, 'chunk')));
    expect(chunks.status).toBe(201);
    expect((await runToEnd(chunks.id, { doc: 'a;b' })).output).toEqual({ result: ['<chunk=a>', '<chunk=b>'] });
    const indexed = await save('indexed', caller(map(withIndex.id)));
    expect(indexed.status).toBe(201);
    expect((await runToEnd(indexed.id, { doc: 'a;b' })).output).toEqual({
      result: ['<item=a><index=0>', '<item=b><index=1>'],
    });
  });

  it('an unpinned callee whose input was renamed after the save fails the node with the names, its steps never run', async () => {
    const callee = await save('to be renamed', framing('ticket'));
    const call = await save(
      'maps ticket',
      caller({
        id: 'call',
        type: 'workflow',
        config: { workflow_id: callee.id, inputs: { ticket: '[{{ inputs.doc }}]' } },
      }),
    );
    const each = await save(
      'maps each ticket',
      caller({ id: 'call', type: 'map', config: { workflow_id: callee.id, item_variable: 'ticket' } }),
    );
    expect([call.status, each.status]).toEqual([201, 201]);
    expect((await runToEnd(call.id, { doc: 'x' })).output).toEqual({ result: '<ticket=[x]>' });

    await rename(callee.id, framing('body'));
    const run = await runToEnd(call.id, { doc: 'x' });
    expect(run).toMatchObject({
      status: 'failed',
      output: null,
      error: {
        code: 'subworkflow_inputs_mismatch',
        node_id: 'call',
        message: `Workflow ${callee.id} as it is now does not fit this node's mapping: no input "ticket" (mapped here); input "body" not mapped here; its inputs are "body".`,
      },
    });
    expect(run.logs.filter((s) => s.status !== 'not_started').map((s) => [s.node_id, s.status])).toEqual([
      ['doc', 'completed'],
      ['call', 'failed'],
    ]);
    const mapped = await runToEnd(each.id, { doc: 'a;b' });
    expect(mapped).toMatchObject({
      status: 'failed',
      error: {
        code: 'subworkflow_inputs_mismatch',
        node_id: 'call',
        message: expect.stringContaining('no input "ticket"'),
      },
    });
    expect(mapped.logs.some((s) => s.node_id.startsWith('call['))).toBe(false);
  });

  it('a workflow node without inputs still passes its upstream text to every input of the callee', async () => {
    const callee = await save('pass-through', framing('ticket', 'copy'));
    const call = await save('passes on', caller({ id: 'call', type: 'workflow', config: { workflow_id: callee.id } }));
    expect(call.status).toBe(201);
    expect((await runToEnd(call.id, { doc: 'x' })).output).toEqual({ result: '<ticket=x><copy=x>' });
  });
});
