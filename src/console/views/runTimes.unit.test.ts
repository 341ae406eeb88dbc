import { describe, expect, it } from 'vitest';
import type { GraphSnapshot, RunDetail, RunStep } from '../../runs/service.ts';
import { runState } from './runs.ts';

// A node's time on a run's page ends where the run ended: a cancelled run's node, logged by its
// worker after the cancel had ended the run, never shows a longer time than the run.

const T0 = Date.UTC(2026, 10, 28, 8, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();

const graph: GraphSnapshot = {
  version: 1,
  nodes: [
    { id: 'ask', type: 'text_input', config: { variable: 'x' } },
    { id: 'answer', type: 'llm_call', config: { model: 'echo' } },
  ],
  edges: [{ from: 'ask', to: 'answer' }],
};

const step = (node_id: string, from: number, to: number, status: RunStep['status']): RunStep => ({
  node_id,
  node_type: 'llm_call',
  status,
  started_at: at(from),
  finished_at: at(to),
  input: null,
  output: null,
  truncated: false,
  usage: null,
  error: null,
});

const cancelled: RunDetail = {
  id: 'run_1',
  workflow_id: 'wf_1',
  status: 'cancelled',
  inputs: {},
  output: null,
  error: null,
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  duration: 3,
  created_at: at(0),
  started_at: at(1000),
  finished_at: at(4000),
  // Its worker noticed the cancel 6 s after the run had ended.
  logs: [step('ask', 1000, 1250, 'completed'), step('answer', 1500, 10_000, 'cancelled')],
};

const timeOf = (markup: string, nodeId: string): string => {
  const row = markup.slice(markup.indexOf(`data-step="${nodeId}"`));
  const cell = row.slice(row.indexOf('data-field="time"'));
  return cell.slice(cell.indexOf('<br>') + 4, cell.indexOf('</td>'));
};

describe("a node's time on a run's page", () => {
  it('ends where the run ended', () => {
    const markup = String(runState({ workflowId: 'wf_1', workflowName: 'W', run: cancelled, graph }));
    expect(timeOf(markup, 'answer')).toBe('2.50 s');
    expect(timeOf(markup, 'ask')).toBe('0.25 s');
  });
});
