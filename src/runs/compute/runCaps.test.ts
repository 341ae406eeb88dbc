// A run's fan-out caps through the executor: RUN_MAX_STEPS counts every node execution (each map
// item's body nodes included), RUN_MAX_ITEMS the items of every map (a nested map's in every item
// of the map around it), a cap's failure stops the whole run even under `on_item_error: skip`, and
// a map tells its progress a bounded number of times however many items it has.
import { describe, expect, it } from 'vitest';
import { executeGraph, type Graph, type StepReport, type WorkflowNode } from '../executor.ts';
import { createModelRouter } from '../providers/index.ts';
import { runBudget } from './budget.ts';
import { RunCaps } from './runCaps.ts';
import { loadConfig } from '../../config.ts';
import type { MapProgress } from '../nodes/subgraph.ts';

const models = createModelRouter({}, []);
const config = loadConfig({});

/** A body that passes its item through a template to its output: three steps per item. */
const body = (inner?: Record<string, unknown>): Graph => ({
  nodes: [
    { id: 'item', type: 'text_input', config: { variable: 'item' } },
    inner
      ? ({ id: 'inner', type: 'map', config: { body: body(), max_items: 1000, ...inner } } as WorkflowNode)
      : { id: 'shape', type: 'template', config: { template: '<{{ inputs.item }}>' } },
    { id: 'out', type: 'text_output', config: { format: 'json' } },
  ],
  edges: [
    { from: 'item', to: inner ? 'inner' : 'shape' },
    { from: inner ? 'inner' : 'shape', to: 'out' },
  ],
});

/** list (a JSON list input) -> map over it -> output. */
function mapping(map: Record<string, unknown>, innerBody?: Graph): Graph {
  return {
    nodes: [
      { id: 'list', type: 'text_input', config: { variable: 'list', type: 'array' } } as WorkflowNode,
      { id: 'each', type: 'map', config: { body: innerBody ?? body(), max_items: 1000, ...map } } as WorkflowNode,
      { id: 'result', type: 'text_output', config: { format: 'json' } },
    ],
    edges: [
      { from: 'list', to: 'each' },
      { from: 'each', to: 'result' },
    ],
  };
}

const withCaps = (maxSteps: number, maxItems: number) => {
  const caps = new RunCaps({ RUN_MAX_STEPS: maxSteps, RUN_MAX_ITEMS: maxItems });
  return { caps, budget: { ...runBudget(config, 'caps-test'), caps } };
};
const list = (n: number, of: (i: number) => unknown = (i) => i) => Array.from({ length: n }, (_, i) => of(i));

describe('run fan-out caps (RUN_MAX_STEPS, RUN_MAX_ITEMS)', () => {
  it('counts every step, map items included; within the caps the run completes', async () => {
    const { caps, budget } = withCaps(3 + 5 * 3, 5);
    const { output } = await executeGraph(mapping({}), { list: list(5) }, models, { budget });
    expect(output.result).toEqual(['<0>', '<1>', '<2>', '<3>', '<4>']);
    expect(caps.counts()).toEqual({ steps: 18, items: 5 });
  });

  it('past RUN_MAX_STEPS the run fails with too_many_steps, and no more steps start', async () => {
    const { caps, budget } = withCaps(10, 1000);
    const started: string[] = [];
    const failure = await executeGraph(mapping({ concurrency: 1 }), { list: list(50) }, models, {
      budget,
      hooks: { onStepStart: (n) => void started.push(n.id) },
    }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'too_many_steps', message: expect.stringContaining('RUN_MAX_STEPS') });
    expect(started.length).toBeLessThanOrEqual(11); // the step past the cap is logged as failed, none after it
    expect(caps.counts().steps).toBeLessThan(15);
  });

  it('on_item_error skip does not swallow a cap: the whole run fails', async () => {
    const { budget } = withCaps(10, 1000);
    const failure = await executeGraph(mapping({ concurrency: 2, on_item_error: 'skip' }), { list: list(50) }, models, {
      budget,
    }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'too_many_steps' });
  });

  it('nested maps multiply: past RUN_MAX_ITEMS the run fails with too_many_items before the inner map runs an item', async () => {
    const { caps, budget } = withCaps(100_000, 30);
    const ends: StepReport[] = [];
    // 4 outer items of 10 inner items each: 4 + 40 items > 30.
    const failure = await executeGraph(
      mapping({ concurrency: 1 }, body({})),
      { list: list(4, () => list(10)) },
      models,
      { budget, hooks: { onStepEnd: (r) => void ends.push(r) } },
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      code: 'too_many_items',
      nodeId: 'each',
      message: expect.stringContaining('RUN_MAX_ITEMS'),
    });
    expect(caps.counts().items).toBe(4 + 3 * 10);
    expect(ends.filter((r) => r.nodeId.startsWith('each[3].inner[')).length).toBe(0);
  });

  it('a map tells its progress at most 11 times whatever its width, counting done and failed items', async () => {
    const progress: MapProgress[] = [];
    const { budget } = withCaps(100_000, 100_000);
    // Every hundredth item (from the 8th) is not JSON: its template's parse_json fails it.
    const items = list(500, (i) => (i % 100 === 7 ? 'not json {' : String(i)));
    const graph = mapping(
      { concurrency: 16, on_item_error: 'skip' },
      {
        ...body(),
        nodes: body().nodes.map((n) =>
          n.id === 'shape' ? ({ ...n, config: { template: '{{ inputs.item | parse_json }}' } } as WorkflowNode) : n,
        ),
      },
    );
    const { output } = await executeGraph(graph, { list: items }, models, {
      budget,
      hooks: { onMapProgress: (node, p) => void (node.id === 'each' && progress.push(p)) },
    });
    expect((output.result as unknown[]).length).toBe(495);
    expect(progress.length).toBeLessThanOrEqual(11);
    expect(progress[0]).toEqual({ total: 500, done: 0, failed: 0 });
    expect(progress.at(-1)).toEqual({ total: 500, done: 495, failed: 5 });
  });
});
