// Error routing's graph rules (nodes/errorRoutes.ts): an `error` edge and a `default`
// value belong only to an llm_call or http_request that goes on past its failure (`on_error: continue`).
import { describe, expect, it } from 'vitest';
import { validateWorkflowGraph } from './graph.ts';

const limits = { maxTokens: 4096 };
const input = { id: 'in', type: 'text_input', config: { variable: 'ticket' } };
const out = { id: 'result', type: 'text_output', config: { format: 'plain' } };
const ask = (config: Record<string, unknown>) => ({
  id: 'ask',
  type: 'llm_call',
  config: { model: 'echo', ...config },
});
const call = (config: Record<string, unknown>) => ({
  id: 'ask',
  type: 'http_request',
  config: { url: 'https://example.com/{{ inputs.ticket }}', ...config },
});
const routed = [
  { from: 'in', to: 'ask' },
  { from: 'ask', to: 'result' },
  { from: 'ask', to: 'oops' },
];
const oops = { id: 'oops', type: 'text_output', config: { format: 'json' } };
const withErrorEdge = (node: unknown) =>
  validateWorkflowGraph([input, node, out, oops], [routed[0], routed[1], { ...routed[2], case: 'error' }], limits);

describe('error routing rules', () => {
  it('accepts an error edge and a default on an llm_call or http_request with on_error: continue', () => {
    expect(withErrorEdge(ask({ on_error: 'continue' }))).toEqual([]);
    expect(withErrorEdge(call({ on_error: 'continue' }))).toEqual([]);
    expect(
      validateWorkflowGraph(
        [input, ask({ on_error: 'continue', default: { amount: 0 } }), out],
        routed.slice(0, 2),
        limits,
      ),
    ).toEqual([]);
    expect(
      validateWorkflowGraph([input, call({ on_error: 'continue', default: null }), out], routed.slice(0, 2), limits),
    ).toEqual([]);
  });

  it('refuses an error edge out of a node whose failure fails the run, or out of another node type', () => {
    expect(withErrorEdge(ask({}))).toEqual([
      {
        pointer: '/edges/2/case',
        message: 'an "error" edge needs its source to go on past its failure: "ask" needs "on_error": "continue"',
      },
    ]);
    expect(withErrorEdge(call({ on_error: 'fail' }))).toEqual([
      { pointer: '/edges/2/case', message: expect.stringContaining('needs "on_error": "continue"') },
    ]);
    expect(withErrorEdge({ id: 'ask', type: 'template', config: { template: 'x' } })).toEqual([
      { pointer: '/edges/2/case', message: expect.stringContaining('("ask" is a template)') },
    ]);
  });

  it('refuses a default on a node whose failure fails the run', () => {
    expect(validateWorkflowGraph([input, ask({ default: 'n/a' }), out], routed.slice(0, 2), limits)).toEqual([
      {
        pointer: '/nodes/1/config/default',
        message: 'is the output of a failed node that goes on: it needs "on_error": "continue"',
      },
    ]);
    expect(
      validateWorkflowGraph([input, call({ on_error: 'fail', default: 0 }), out], routed.slice(0, 2), limits),
    ).toEqual([{ pointer: '/nodes/1/config/default', message: expect.stringContaining('"on_error": "continue"') }]);
  });

  it('reads a null default as absent, so a generated client sending every unset field as null is not refused', () => {
    // openapi-generator python's WorkflowCreate.from_dict(...) sends config.default: null for a plain llm_call.
    expect(validateWorkflowGraph([input, ask({ default: null }), out], routed.slice(0, 2), limits)).toEqual([]);
    expect(
      validateWorkflowGraph([input, call({ on_error: 'fail', default: null }), out], routed.slice(0, 2), limits),
    ).toEqual([]);
  });
});
