import { describe, expect, it } from 'vitest';
import { executeGraph, type Graph, type StepReport } from './executor.ts';
import { RunFailure } from '../shared/errors.ts';
import { createModelRouter, type ChatRequest, type ModelProvider } from './providers/index.ts';
import { seedGraph } from '../../test/support/seedWorkflow.ts';

const seed: Graph = seedGraph();

/** A provider whose calls finish only when the test says so, to observe concurrency. */
function gatedProvider() {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const provider: ModelProvider = {
    name: 'gated',
    serves: (m) => m.startsWith('gated'),
    complete: (request: ChatRequest) =>
      new Promise((resolve, reject) => {
        started.push(request.model);
        request.signal?.addEventListener('abort', () => reject(request.signal?.reason));
        gates.set(request.model, () =>
          resolve({
            model: request.model,
            content: `${request.model}:${request.messages.at(-1)?.content}`,
            finishReason: 'stop',
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      }),
  };
  return { provider, started, open: (model: string) => gates.get(model)?.() };
}

describe('executeGraph', () => {
  it('runs the seed workflow in order and keys the output by text_output id', async () => {
    const steps: StepReport[] = [];
    const result = await executeGraph(seed, { ticket: 'Export fails' }, createModelRouter({}), {
      hooks: { onStepEnd: (r) => void steps.push(r) },
    });
    expect(result.output).toEqual({ result: 'Export fails' });
    expect(steps.map((s) => [s.nodeId, s.status])).toEqual([
      ['input', 'completed'],
      ['summarise', 'completed'],
      ['result', 'completed'],
    ]);
    expect(steps[1]!.usage).toEqual({ prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 });
  });

  it('resumes after the nodes an earlier attempt finished: none of them runs again, and their texts, verdicts and outputs stand (issue 32)', async () => {
    const gated = gatedProvider();
    const graph: Graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'q' } },
        { id: 'ask', type: 'llm_call', config: { model: 'gated-ask' } },
        {
          id: 'check',
          type: 'condition',
          config: { left: '{{ nodes.ask.output }}', operator: 'contains', right: 'yes' },
        },
        { id: 'early', type: 'text_output', config: { format: 'plain' } },
        { id: 'then', type: 'llm_call', config: { model: 'gated-then' } },
        { id: 'else', type: 'llm_call', config: { model: 'gated-else' } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'in', to: 'ask' },
        { from: 'ask', to: 'check' },
        { from: 'ask', to: 'early' },
        { from: 'check', to: 'then', branch: 'true' },
        { from: 'check', to: 'else', branch: 'false' },
        { from: 'then', to: 'out' },
        { from: 'else', to: 'out' },
      ],
    };
    const ran: string[] = [];
    const resumed = new Map([
      ['in', 'q'],
      ['ask', 'oh yes'],
      ['check', 'true'],
      ['early', 'oh yes'],
    ]);
    const running = executeGraph(graph, { q: 'q' }, createModelRouter({}, [gated.provider]), {
      resumed,
      hooks: { onStepStart: (n) => void ran.push(n.id) },
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(gated.started).toEqual(['gated-then']); // the verdict stands: the else branch is not taken, ask is not asked again
    gated.open('gated-then');
    expect((await running).output).toEqual({ early: 'oh yes', out: 'gated-then:true' }); // then reads the condition's text
    expect(ran).toEqual(['then', 'out']);
  });

  it('runs independent branches concurrently', async () => {
    const gated = gatedProvider();
    const graph: Graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'q' } },
        { id: 'a', type: 'llm_call', config: { model: 'gated-a' } },
        { id: 'b', type: 'llm_call', config: { model: 'gated-b' } },
        { id: 'out', type: 'text_output', config: { format: 'markdown' } },
      ],
      edges: [
        { from: 'in', to: 'a' },
        { from: 'in', to: 'b' },
        { from: 'a', to: 'out' },
        { from: 'b', to: 'out' },
      ],
    };
    const running = executeGraph(graph, { q: 'x' }, createModelRouter({}, [gated.provider]));
    await new Promise((r) => setTimeout(r, 20));
    expect(gated.started.sort()).toEqual(['gated-a', 'gated-b']); // both in flight before either ends
    gated.open('gated-b');
    gated.open('gated-a');
    expect((await running).output).toEqual({ out: 'gated-a:x\n\ngated-b:x' });
  });

  it('parses json output, and keeps non-JSON text as a string', async () => {
    const jsonGraph: Graph = {
      nodes: [
        { id: 'in', type: 'text_input', config: { variable: 'v' } },
        { id: 'out', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [{ from: 'in', to: 'out' }],
    };
    expect((await executeGraph(jsonGraph, { v: '{"a":1}' }, createModelRouter({}))).output).toEqual({ out: { a: 1 } });
    expect((await executeGraph(jsonGraph, { v: 'not json' }, createModelRouter({}))).output).toEqual({
      out: 'not json',
    });
  });

  it('fails with model_unavailable and the node id for an unknown model', async () => {
    const graph: Graph = {
      ...seed,
      nodes: seed.nodes.map((n) => (n.type === 'llm_call' ? { ...n, config: { model: 'gpt-9' } } : n)),
    };
    const error = await executeGraph(graph, { ticket: 't' }, createModelRouter({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFailure);
    expect((error as RunFailure).toJSON()).toMatchObject({ code: 'model_unavailable', node_id: 'summarise' });
  });

  it('stops before the next node when the run is no longer wanted', async () => {
    let asked = 0;
    const error = await executeGraph(seed, { ticket: 't' }, createModelRouter({}), {
      hooks: { shouldContinue: () => ++asked < 2 },
    }).catch((e: unknown) => e);
    expect((error as RunFailure).code).toBe('cancelled');
    expect((error as RunFailure).nodeId).toBe('summarise');
  });

  it('aborts an in-flight provider call with the abort reason (timeout)', async () => {
    const gated = gatedProvider();
    const graph: Graph = {
      ...seed,
      nodes: seed.nodes.map((n) => (n.type === 'llm_call' ? { ...n, config: { model: 'gated-x' } } : n)),
    };
    const controller = new AbortController();
    const running = executeGraph(graph, { ticket: 't' }, createModelRouter({}, [gated.provider]), {
      signal: controller.signal,
    });
    await new Promise((r) => setTimeout(r, 20));
    controller.abort(new RunFailure('timeout', 'The run took longer than 1 s.'));
    const error = await running.catch((e: unknown) => e);
    expect((error as RunFailure).toJSON()).toMatchObject({ code: 'timeout', node_id: 'summarise' });
  });
});
