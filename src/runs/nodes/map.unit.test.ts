// split and map through the executor: a map works through every item of a list
// with at most `concurrency` at once, results in the items' order, each item's steps named
// `<map>[<i>].<node>`, an item's failure handled by `on_item_error`, and a cancel stops the items.
import { describe, expect, it } from 'vitest';
import { executeGraph, type Graph, type StepReport, type WorkflowNode } from '../executor.ts';
import { RunFailure } from '../../shared/errors.ts';
import { createModelRouter, type ChatRequest, type ModelProvider } from '../providers/index.ts';
import { runBudget } from '../compute/budget.ts';
import { loadConfig } from '../../config.ts';

/** `shout` answers the prompt upper-cased after a few ms; a prompt containing "boom" fails. Counts calls running at once. */
function shoutProvider(delayMs = 5) {
  const seen = { running: 0, most: 0, calls: 0 };
  const provider: ModelProvider = {
    name: 'shout',
    serves: (m) => m === 'shout',
    complete: async (request: ChatRequest) => {
      seen.calls += 1;
      seen.running += 1;
      seen.most = Math.max(seen.most, seen.running);
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, delayMs);
          request.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(request.signal?.reason);
          });
        });
        const prompt = String(request.messages.at(-1)?.content);
        if (prompt.includes('boom')) throw new RunFailure('provider_error', `the provider refused "${prompt}"`);
        return {
          model: request.model,
          content: prompt.toUpperCase(),
          finishReason: 'stop',
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        };
      } finally {
        seen.running -= 1;
      }
    },
  };
  return { models: createModelRouter({}, [provider]), seen };
}

const body: Graph = {
  nodes: [
    { id: 'chunk', type: 'text_input', config: { variable: 'item' } },
    { id: 'loud', type: 'llm_call', config: { model: 'shout', prompt: '{{ inputs.item }}' } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'chunk', to: 'loud' },
    { from: 'loud', to: 'out' },
  ],
};

function pipeline(split: Record<string, unknown>, map: Record<string, unknown> = {}): Graph {
  return {
    nodes: [
      { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
      { id: 'parts', type: 'split', config: { by: 'separator', separator: ',', ...split } } as WorkflowNode,
      { id: 'each', type: 'map', config: { body, ...map } } as WorkflowNode,
      { id: 'result', type: 'text_output', config: { format: 'json' } },
    ],
    edges: [
      { from: 'doc', to: 'parts' },
      { from: 'parts', to: 'each' },
      { from: 'each', to: 'result' },
    ],
  };
}

describe('split and map nodes', () => {
  it('runs the body once per item, results in the items order, steps named <map>[<i>].<node>', async () => {
    const { models } = shoutProvider();
    const steps: StepReport[] = [];
    const started: string[] = [];
    const { output } = await executeGraph(pipeline({}), { doc: 'a,b,c' }, models, {
      hooks: { onStepStart: (node) => void started.push(node.id), onStepEnd: (r) => void steps.push(r) },
    });
    expect(output).toEqual({ result: ['A', 'B', 'C'] });
    expect(steps.find((s) => s.nodeId === 'parts')).toMatchObject({ nodeType: 'split', output: '["a","b","c"]' });
    expect(steps.find((s) => s.nodeId === 'each')).toMatchObject({
      nodeType: 'map',
      status: 'completed',
      output: '["A","B","C"]',
    });
    expect(steps.find((s) => s.nodeId === 'each[1].loud')).toMatchObject({
      nodeType: 'llm_call',
      status: 'completed',
      output: 'B',
      usage: { total_tokens: 2 },
    });
    expect(started).toEqual(expect.arrayContaining(['each[0].chunk', 'each[2].out']));
    // The map's own step starts before its items' and ends after them.
    expect(started.indexOf('each')).toBeLessThan(started.indexOf('each[0].chunk'));
    expect(steps.at(-2)!.nodeId).toBe('each');
  });

  it('runs at most `concurrency` items at once, and every item of a long list', async () => {
    const { models, seen } = shoutProvider(10);
    const doc = Array.from({ length: 12 }, (_, i) => `w${i}`).join(',');
    const { output } = await executeGraph(pipeline({}, { concurrency: 3 }), { doc }, models);
    expect(output.result).toEqual(doc.toUpperCase().split(','));
    expect(seen.calls).toBe(12);
    expect(seen.most).toBe(3);
  });

  it('on_item_error fail (default): the map fails with the item error, naming the inner step; the other items stop', async () => {
    const { models, seen } = shoutProvider(20);
    const steps: StepReport[] = [];
    const failure = await executeGraph(pipeline({}, { concurrency: 1 }), { doc: 'a,boom,c,d' }, models, {
      hooks: { onStepEnd: (r) => void steps.push(r) },
    }).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      code: 'provider_error',
      nodeId: 'each',
      message: expect.stringContaining('Item 1 failed at step each[1].loud'),
    });
    expect(seen.calls).toBe(2); // c and d never started
    expect(steps.find((s) => s.nodeId === 'each[1].loud')).toMatchObject({ status: 'failed' });
    expect(steps.find((s) => s.nodeId === 'each')).toMatchObject({ status: 'failed' });
  });

  it('on_item_error skip leaves the failed item out; default puts the default value in its place', async () => {
    const { models } = shoutProvider();
    const skipped = await executeGraph(pipeline({}, { on_item_error: 'skip' }), { doc: 'a,boom,c' }, models);
    expect(skipped.output).toEqual({ result: ['A', 'C'] });
    const defaulted = await executeGraph(
      pipeline({}, { on_item_error: 'default', default: 'n/a' }),
      { doc: 'a,boom,c' },
      models,
    );
    expect(defaulted.output).toEqual({ result: ['A', 'n/a', 'C'] });
  });

  it('a cancel stops the items under way and those not started, whatever the error policy', async () => {
    const { models, seen } = shoutProvider(1000);
    const controller = new AbortController();
    const steps: StepReport[] = [];
    const running = executeGraph(pipeline({}, { concurrency: 2, on_item_error: 'skip' }), { doc: 'a,b,c,d' }, models, {
      signal: controller.signal,
      hooks: { onStepEnd: (r) => void steps.push(r) },
    }).catch((e: unknown) => e);
    while (seen.calls < 2) await new Promise((r) => setTimeout(r, 5));
    controller.abort(new RunFailure('cancelled', 'The run was cancelled.'));
    expect(await running).toMatchObject({ code: 'cancelled' });
    expect(seen.calls).toBe(2);
    expect(steps.filter((s) => s.nodeId.endsWith('.loud')).map((s) => s.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('too many items: split fails with too_many_items past its max_items, map before any item runs', async () => {
    const { models, seen } = shoutProvider();
    await expect(executeGraph(pipeline({ max_items: 2 }), { doc: 'a,b,c' }, models)).rejects.toMatchObject({
      code: 'too_many_items',
      nodeId: 'parts',
    });
    await expect(executeGraph(pipeline({}, { max_items: 2 }), { doc: 'a,b,c' }, models)).rejects.toMatchObject({
      code: 'too_many_items',
      nodeId: 'each',
    });
    expect(seen.calls).toBe(0);
  });

  it('a map whose input is not a list fails with invalid_items', async () => {
    const { models } = shoutProvider();
    const graph: Graph = {
      nodes: [
        { id: 'doc', type: 'text_input', config: { variable: 'doc' } },
        { id: 'each', type: 'map', config: { body } } as WorkflowNode,
        { id: 'result', type: 'text_output', config: { format: 'json' } },
      ],
      edges: [
        { from: 'doc', to: 'each' },
        { from: 'each', to: 'result' },
      ],
    };
    await expect(executeGraph(graph, { doc: 'just text' }, models)).rejects.toMatchObject({
      code: 'invalid_items',
      nodeId: 'each',
    });
    expect((await executeGraph(graph, { doc: '["x","y"]' }, models)).output).toEqual({ result: ['X', 'Y'] });
  });

  it('split by tokens feeds a map that covers the whole text (2,000 words, none lost)', async () => {
    const { models } = shoutProvider(0);
    const doc = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ');
    const { output } = await executeGraph(
      pipeline({ by: 'tokens', size: 200, separator: undefined }, { concurrency: 4 }),
      { doc },
      models,
    );
    const chunks = output.result as string[];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe(doc.toUpperCase());
  });

  it("each item's texts count against the run's RUN_TEXT_MAX_CHARS, not a budget of their own", async () => {
    const { models } = shoutProvider();
    const amplify: Graph = {
      nodes: [
        { id: 'chunk', type: 'text_input', config: { variable: 'item' } },
        { id: 'big', type: 'template', config: { template: '{% for i in (1..20) %}{{ inputs.item }}{% endfor %}' } },
        { id: 'small', type: 'template', config: { template: '{{ inputs.item | size }}' } },
        { id: 'out', type: 'text_output', config: { format: 'plain' } },
      ],
      edges: [
        { from: 'chunk', to: 'big' },
        { from: 'big', to: 'small' },
        { from: 'small', to: 'out' },
      ],
    };
    const doc = Array.from({ length: 10 }, (_, i) => `item${i}`.padEnd(10, '.')).join(',');
    const graph = pipeline({}, { body: amplify });
    // The run's own texts are a few hundred characters; its items' are over 2,000.
    const roomy = await executeGraph(graph, { doc }, models, {
      budget: runBudget(loadConfig({ RUN_TEXT_MAX_CHARS: '4000' }), 'texts'),
    });
    expect(roomy.output.result).toEqual(Array(10).fill('10'));
    await expect(
      executeGraph(graph, { doc }, models, { budget: runBudget(loadConfig({ RUN_TEXT_MAX_CHARS: '1000' }), 'texts') }),
    ).rejects.toMatchObject({
      code: 'output_too_large',
      nodeId: 'each',
      message: expect.stringContaining('RUN_TEXT_MAX_CHARS'),
    });
  });
});
