// An agent taken up again after a crash (a run taken over: `resumed` holds the steps an earlier
// attempt finished): it asks the model again, but a tool call already finished, by its number and
// tool, answers its logged result without running again; a workflow tool's finished inner steps
// are not run again either. And its conversation's bound. No database: the executor with a
// scripted provider.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { runBudget } from './compute/budget.ts';
import { executeGraph, type Graph, type StepReport } from './executor.ts';
import { createModelRouter, type ChatRequest, type ChatResult, type ModelProvider } from './providers/index.ts';

const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

/** Answers with the scripted results in order, keeping each request. */
function scripted(results: Partial<ChatResult>[]): { provider: ModelProvider; requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  const provider: ModelProvider = {
    name: 'scripted',
    serves: (model) => model === 'scripted',
    complete: (request) => {
      requests.push({ ...request, messages: structuredClone(request.messages) }); // the loop appends to its list
      const next = results.shift() ?? { content: 'done' };
      return Promise.resolve({ model: 'scripted', content: '', finishReason: 'stop', usage, ...next });
    },
  };
  return { provider, requests };
}

const callee: Graph = {
  nodes: [
    { id: 'x', type: 'text_input', config: { variable: 'x' } },
    { id: 'echo', type: 'template', config: { template: 'ran with {{ inputs.x }}' } },
    { id: 'r', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'x', to: 'echo' },
    { from: 'echo', to: 'r' },
  ],
};

const graph: Graph = {
  nodes: [
    { id: 'q', type: 'text_input', config: { variable: 'q' } },
    {
      id: 'bot',
      type: 'agent',
      config: {
        model: 'scripted',
        tools: [
          // A URL nothing answers at: a call that ran again would fail.
          { kind: 'http', name: 'fetch', description: 'd', url: 'http://127.0.0.1:9/never' },
          { kind: 'workflow', name: 'sub', description: 'd', workflow_id: 'wf_callee', version: 1 },
        ],
      },
    },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'q', to: 'bot' },
    { from: 'bot', to: 'out' },
  ],
};

describe('an agent taken up again', () => {
  it('does not run again the tool calls an earlier attempt finished', async () => {
    const { provider, requests } = scripted([
      {
        toolCalls: [
          { id: 'a', type: 'function', function: { name: 'fetch', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'sub', arguments: '{"x":"1"}' } },
        ],
        finishReason: 'tool_calls',
      },
      { content: 'answered' },
    ]);
    const ended: StepReport[] = [];
    const result = await executeGraph(graph, { q: 'go' }, createModelRouter({}, [provider]), {
      resumed: new Map<string, unknown>([
        ['q', 'go'],
        ['bot[0].fetch', { cached: true }],
        ['bot[1].sub.x', '1'],
        ['bot[1].sub.echo', 'echoed before the crash'],
      ]),
      workflows: (id) => Promise.resolve(id === 'wf_callee' ? callee : undefined),
      calls: ['wf_caller'],
      hooks: { onStepEnd: (report) => void ended.push(report) },
    });
    expect(result.output).toEqual({ out: 'answered' });
    const toolMessages = requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(toolMessages).toEqual([
      { role: 'tool', tool_call_id: 'a', content: '{"cached":true}' },
      { role: 'tool', tool_call_id: 'b', content: 'echoed before the crash' },
    ]);
    // Logged again: only what had not finished (the workflow tool's step and its output node, the agent, the output).
    expect(ended.map((r) => r.nodeId).sort()).toEqual(['bot', 'bot[1].sub', 'bot[1].sub.r', 'out']);
    expect(ended.find((r) => r.nodeId === 'bot')!.usage).toEqual({
      prompt_tokens: 6,
      completion_tokens: 4,
      total_tokens: 10,
    });
  });
});

describe("an agent's conversation", () => {
  it('fails with output_too_large once it grows past NODE_TEXT_MAX_CHARS, counting the calls made', async () => {
    const long = JSON.stringify({ text: 'x'.repeat(1500) });
    const { provider } = scripted([
      { toolCalls: [{ id: 'a', type: 'function', function: { name: 'nowhere', arguments: long } }] },
      { content: 'never asked' },
    ]);
    const ended: StepReport[] = [];
    const run = executeGraph(graph, { q: 'go' }, createModelRouter({}, [provider]), {
      budget: runBudget(loadConfig({ NODE_TEXT_MAX_CHARS: '1000', USER_STEPS_PER_SECOND: '0' }), 'conversation'),
      workflows: (id) => Promise.resolve(id === 'wf_callee' ? callee : undefined),
      calls: ['wf_caller'],
      hooks: { onStepEnd: (report) => void ended.push(report) },
    });
    await expect(run).rejects.toMatchObject({ code: 'output_too_large', nodeId: 'bot' });
    expect(ended.find((r) => r.nodeId === 'bot')!.usage).toEqual(usage);
  });
});
