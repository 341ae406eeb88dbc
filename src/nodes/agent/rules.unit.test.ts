import { describe, expect, it } from 'vitest';
import { agent } from './index.ts';
import { agentProblems, calledWorkflows } from './rules.ts';

const http = { kind: 'http', name: 'fetch', description: 'd', url: 'https://example.com/{{ args.q }}' };
const wf = { kind: 'workflow', name: 'lookup', description: 'd', workflow_id: 'wf_1', version: 2 };

describe('agent config rules', () => {
  it('accepts one tool of each kind and tool_choice naming a mode or a tool', () => {
    expect(agentProblems({ tools: [http, wf], tool_choice: 'lookup' })).toEqual([]);
    expect(agentProblems({ tools: [http], tool_choice: 'required' })).toEqual([]);
  });

  it('holds each kind to its fields, names unique, tool_choice to a tool it has', () => {
    const problems = agentProblems({
      tools: [
        { ...http, workflow_id: 'wf_1' },
        { kind: 'workflow', name: 'fetch', description: 'd', url: 'https://example.com' },
        { ...http, name: 'post', body: { q: '{{ args.q }}' } },
        { ...http, name: 'typed', parameters: { type: 'array' } },
        { ...http, name: 'leak', method: 'POST', body: { key: '{{ secrets.KEY }}' } },
      ],
      tool_choice: 'other',
    });
    expect(problems.map((p) => p.pointer)).toEqual([
      '/tools/0/workflow_id',
      '/tools/1/workflow_id',
      '/tools/1/version',
      '/tools/1/url',
      '/tools/1/name',
      '/tools/2/body',
      '/tools/3/parameters/type',
      '/tools/4/body',
      '/tool_choice',
    ]);
  });

  it('names the workflows its tools call, pinned, with any callee inputs fitting', () => {
    expect(calledWorkflows({ tools: [http, wf] })).toEqual([
      {
        workflowId: 'wf_1',
        version: 2,
        pointer: '/tools/1/workflow_id',
        inputs: { named: [], passThrough: true, pointer: '/tools/1' },
      },
    ]);
  });

  it('checks its prompts as templates and types its output by response_format', () => {
    expect(agent.templates!({ prompt: '{{ inputs.q }}', system_prompt: 'Be brief.', tools: [http] })).toEqual([
      { source: 'Be brief.', pointer: '/system_prompt' },
      { source: '{{ inputs.q }}', pointer: '/prompt' },
    ]);
    expect(agent.output!({ response_format: { type: 'json_object' } })).toEqual({ type: 'object' });
  });
});
