import { describe, expect, it } from 'vitest';
import { validateWorkflowGraph, type GraphLimits } from './graph.ts';

const limits = { maxTokens: 4096 };
const input = (id: string, variable = 'ticket') => ({ id, type: 'text_input', config: { variable } });
const llm = (id: string, config: Record<string, unknown> = { model: 'echo' }) => ({ id, type: 'llm_call', config });
const output = (id: string, format = 'plain') => ({ id, type: 'text_output', config: { format } });
const edge = (from: string, to: string) => ({ from, to });

const valid = {
  nodes: [
    input('input'),
    llm('summarise', { model: 'echo', temperature: 0.2, max_tokens: 256, system_prompt: 'Be brief.' }),
    output('result'),
  ],
  edges: [edge('input', 'summarise'), edge('summarise', 'result')],
};

function problems(nodes: unknown, edges: unknown, max: GraphLimits = limits) {
  return validateWorkflowGraph(nodes, edges, max);
}

/** Only the problems inside node configs (the config rules, without the graph's own). */
const configProblems = (nodes: unknown, edges: unknown, max: GraphLimits = limits) =>
  problems(nodes, edges, max).filter((p) => p.pointer.includes('/config'));

describe('validateWorkflowGraph', () => {
  it('accepts the seed example graph', () => {
    expect(problems(valid.nodes, valid.edges)).toEqual([]);
  });

  it('refuses a graph without nodes: it could never run', () => {
    expect(problems([], [])).toEqual([{ pointer: '/nodes', message: expect.stringMatching(/at least one node/) }]);
  });

  it('accepts branches that join (a DAG, not only a chain)', () => {
    const nodes = [input('a'), input('b', 'other'), llm('x'), llm('y'), output('out')];
    const edges = [edge('a', 'x'), edge('b', 'y'), edge('x', 'out'), edge('y', 'out')];
    expect(problems(nodes, edges)).toEqual([]);
  });

  describe('node ids', () => {
    it('rejects a duplicate id, pointing at the second node and naming the first', () => {
      expect(problems([input('a'), output('a')], [edge('a', 'a')])).toContainEqual({
        pointer: '/nodes/1/id',
        message: 'duplicate node id "a" (also /nodes/0)',
      });
    });

    it('rejects a missing, non-string or badly formed id', () => {
      const result = problems(
        [
          { type: 'text_input', config: { variable: 'v' } },
          { ...input('x'), id: 5 },
          { ...input('x'), id: 'has space' },
          { ...input('y'), id: '' },
        ],
        [],
      );
      expect(result.map((p) => p.pointer)).toEqual(['/nodes/0/id', '/nodes/1/id', '/nodes/2/id', '/nodes/3/id']);
    });
  });

  describe('node types and shape', () => {
    it('rejects an unknown type and names the known ones', () => {
      expect(problems([{ id: 'n', type: 'http_call', config: {} }], [])).toEqual([
        {
          pointer: '/nodes/0/type',
          message: expect.stringMatching(
            /^unknown node type "http_call"; known: text_input, llm_call, template, condition, text_output(, [a-z_]+)+$/,
          ),
        },
      ]);
    });

    it('rejects a node that is not an object, a missing type or config, and unknown node properties', () => {
      expect(
        problems(['oops', { id: 'a', config: {} }, { id: 'b', type: 'text_output' }, { ...output('c'), extra: 1 }], []),
      ).toEqual([
        { pointer: '/nodes/0', message: 'must be an object with id, type and config' },
        { pointer: '/nodes/1/type', message: 'is required' },
        { pointer: '/nodes/2/config', message: 'is required' },
        { pointer: '/nodes/2', message: 'text_output "b" is not reachable from any text_input' },
        { pointer: '/nodes/3/extra', message: 'unknown property "extra"' },
        { pointer: '/nodes/3', message: 'text_output "c" is not reachable from any text_input' },
      ]);
    });

    it('rejects nodes or edges that are not arrays', () => {
      expect(problems({}, 'x')).toEqual([
        { pointer: '/nodes', message: 'must be an array' },
        { pointer: '/edges', message: 'must be an array' },
      ]);
    });

    it('rejects more nodes or edges than the contract allows', () => {
      const nodes = Array.from({ length: 501 }, (_, i) => llm(`n${i}`));
      expect(problems(nodes, [])).toContainEqual({ pointer: '/nodes', message: 'must have at most 500 nodes' });
    });
  });

  describe('config per type', () => {
    it('text_input: variable is required and must be an identifier', () => {
      expect(
        problems(
          [
            { id: 'a', type: 'text_input', config: {} },
            input('b', '1abc'),
            input('c', 'with-dash'),
            input('d', 'x'.repeat(65)),
          ],
          [],
        ),
      ).toEqual([
        { pointer: '/nodes/0/config/variable', message: 'is required for a text_input node' },
        { pointer: '/nodes/1/config/variable', message: expect.stringMatching(/identifier/) },
        { pointer: '/nodes/2/config/variable', message: expect.stringMatching(/identifier/) },
        { pointer: '/nodes/3/config/variable', message: expect.stringMatching(/identifier/) },
      ]);
    });

    it('llm_call: model is required and non-empty', () => {
      expect(configProblems([llm('a', {}), llm('b', { model: '  ' }), llm('c', { model: 7 })], [])).toEqual([
        { pointer: '/nodes/0/config/model', message: 'is required for a llm_call node' },
        { pointer: '/nodes/1/config/model', message: 'must not be empty' },
        { pointer: '/nodes/2/config/model', message: 'must be a string' },
      ]);
    });

    it('llm_call: temperature is a number from 0 to 2', () => {
      expect(
        configProblems(
          [
            llm('a', { model: 'm', temperature: 2.5 }),
            llm('b', { model: 'm', temperature: -0.1 }),
            llm('c', { model: 'm', temperature: 'hot' }),
            llm('d', { model: 'm', temperature: 2 }),
          ],
          [],
        ),
      ).toEqual([
        { pointer: '/nodes/0/config/temperature', message: 'must be <= 2' },
        { pointer: '/nodes/1/config/temperature', message: 'must be >= 0' },
        { pointer: '/nodes/2/config/temperature', message: 'must be a number' },
      ]);
    });

    it('llm_call: max_tokens is a positive integer up to the configured limit', () => {
      expect(
        configProblems(
          [
            llm('a', { model: 'm', max_tokens: 0 }),
            llm('b', { model: 'm', max_tokens: 1.5 }),
            llm('c', { model: 'm', max_tokens: 4097 }),
            llm('d', { model: 'm', max_tokens: 4096 }),
          ],
          [],
        ),
      ).toEqual([
        { pointer: '/nodes/0/config/max_tokens', message: 'must be >= 1' },
        { pointer: '/nodes/1/config/max_tokens', message: 'must be an integer' },
        { pointer: '/nodes/2/config/max_tokens', message: 'must be <= 4096' },
      ]);
    });

    it('llm_call: the contract maximum of max_tokens holds even when the configured limit is higher', () => {
      expect(configProblems([llm('a', { model: 'm', max_tokens: 40000 })], [], { maxTokens: 100000 })).toEqual([
        { pointer: '/nodes/0/config/max_tokens', message: 'must be <= 32768' },
      ]);
    });

    it('text_output: format is one of plain, markdown, json', () => {
      expect(
        problems(
          [input('i'), output('a', 'html'), output('b', 'json'), { id: 'c', type: 'text_output', config: {} }],
          [edge('i', 'a'), edge('i', 'b'), edge('i', 'c')],
        ),
      ).toEqual([
        { pointer: '/nodes/1/config/format', message: 'must be one of plain, markdown, json' },
        { pointer: '/nodes/3/config/format', message: 'is required for a text_output node' },
      ]);
    });

    it('rejects config keys that do not belong to the type, and a config that is not an object', () => {
      expect(
        configProblems(
          [
            { id: 'a', type: 'text_input', config: { variable: 'v', model: 'echo' } },
            { id: 'b', type: 'llm_call', config: [] },
          ],
          [],
        ),
      ).toEqual([
        { pointer: '/nodes/0/config/model', message: 'unknown property "model"' },
        { pointer: '/nodes/1/config', message: 'must be an object' },
      ]);
    });

    it('names an unknown key inside a list of the config (a switch case) at its place, not a 500', () => {
      const route = {
        id: 'r',
        type: 'switch',
        config: { cases: [{ name: 'large', operator: '>', value: 1000, extra: 42 }] },
      };
      expect(configProblems([route], [])).toEqual([
        { pointer: '/nodes/0/config/cases/0/extra', message: 'unknown property "extra"' },
      ]);
    });
  });

  describe('edges', () => {
    it('rejects an edge naming a node that does not exist', () => {
      expect(problems([input('a')], [edge('a', 'summarise'), edge('ghost', 'a')])).toEqual([
        { pointer: '/edges/0', message: 'edge refers to unknown node "summarise"' },
        { pointer: '/edges/1', message: 'edge refers to unknown node "ghost"' },
        { pointer: '/edges/1', message: 'edge into text_input "a": a text_input takes only its run input' },
      ]);
    });

    it('refuses an edge into a text_input or out of a text_output: neither carries anything', () => {
      const nodes = [input('in'), input('other', 'other'), llm('a'), output('out'), llm('after')];
      const edges = [edge('in', 'a'), edge('a', 'other'), edge('a', 'out'), edge('out', 'after')];
      expect(problems(nodes, edges)).toEqual([
        { pointer: '/edges/1', message: 'edge into text_input "other": a text_input takes only its run input' },
        { pointer: '/edges/3', message: 'edge out of text_output "out": a text_output ends the graph' },
      ]);
    });

    it('refuses an llm_call with no upstream node: it would have no prompt', () => {
      expect(problems([input('in'), llm('lonely'), output('out')], [edge('in', 'out')])).toEqual([
        {
          pointer: '/nodes/1',
          message: 'llm_call "lonely" has no upstream node: connect an edge into it, or give it a prompt',
        },
      ]);
    });

    it('refuses a model the service does not serve when its model list is fixed, naming the list', () => {
      const fixed = { ...limits, models: ['echo', 'llama-3'] };
      expect(
        problems(
          valid.nodes.map((n) => (n.type === 'llm_call' ? llm(n.id, { model: 'gpt-9' }) : n)),
          valid.edges,
          fixed,
        ),
      ).toEqual([
        { pointer: '/nodes/1/config/model', message: 'unknown model "gpt-9"; this service serves echo, llama-3' },
      ]);
      expect(problems(valid.nodes, valid.edges, fixed)).toEqual([]);
      // Without a fixed list (a provider serving every model) any model name is accepted.
      expect(
        problems(
          valid.nodes.map((n) => (n.type === 'llm_call' ? llm(n.id, { model: 'gpt-9' }) : n)),
          valid.edges,
        ),
      ).toEqual([]);
    });

    it('rejects a self-loop', () => {
      expect(problems([input('a'), llm('b')], [edge('a', 'b'), edge('b', 'b')])).toEqual([
        { pointer: '/edges/1', message: 'edge connects node "b" to itself' },
      ]);
    });

    it('rejects a duplicate edge, naming the first', () => {
      expect(problems([input('a'), llm('b')], [edge('a', 'b'), edge('a', 'b')])).toEqual([
        { pointer: '/edges/1', message: 'duplicate edge "a" -> "b" (also /edges/0)' },
      ]);
    });

    it('rejects edges that are not objects, lack an end, or carry unknown properties', () => {
      expect(problems([input('a'), llm('b')], [null, { from: 'a' }, { from: 'a', to: 'b', label: 'x' }])).toEqual([
        { pointer: '/edges/0', message: 'must be an object with from and to' },
        { pointer: '/edges/1/to', message: 'is required' },
        { pointer: '/edges/2/label', message: 'unknown property "label"' },
      ]);
    });
  });

  describe('cycles', () => {
    it('rejects a cycle, naming its nodes', () => {
      const nodes = [input('in'), llm('a'), llm('b'), llm('c'), output('out')];
      const edges = [edge('in', 'a'), edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'out')];
      expect(problems(nodes, edges)).toEqual([
        { pointer: '/edges/1', message: 'edges form a cycle through "a", "b", "c"' },
      ]);
    });

    it('reports each separate cycle once', () => {
      const nodes = [llm('a'), llm('b'), llm('c'), llm('d')];
      const edges = [edge('a', 'b'), edge('b', 'a'), edge('c', 'd'), edge('d', 'c')];
      expect(problems(nodes, edges).map((p) => p.pointer)).toEqual(['/edges/0', '/edges/2']);
    });

    it('handles a long chain without overflowing the stack', () => {
      const nodes = [input('n0'), ...Array.from({ length: 498 }, (_, i) => llm(`n${i + 1}`)), output('n499')];
      const edges = Array.from({ length: 499 }, (_, i) => edge(`n${i}`, `n${i + 1}`));
      expect(problems(nodes, edges)).toEqual([]);
    });
  });

  describe('reachability', () => {
    it('rejects a text_output that no text_input reaches', () => {
      const nodes = [input('in'), llm('a'), output('fed'), llm('b'), output('orphan'), llm('c')];
      const edges = [edge('in', 'a'), edge('a', 'fed'), edge('c', 'b'), edge('b', 'orphan'), edge('b', 'c')];
      expect(problems(nodes, edges)).toEqual([
        { pointer: '/nodes/4', message: 'text_output "orphan" is not reachable from any text_input' },
        { pointer: '/edges/2', message: 'edges form a cycle through "b", "c"' },
      ]);
    });

    it('follows edges in their direction only', () => {
      expect(problems([input('in'), output('out')], [edge('out', 'in')])).toEqual([
        { pointer: '/nodes/1', message: 'text_output "out" is not reachable from any text_input' },
        { pointer: '/edges/0', message: 'edge into text_input "in": a text_input takes only its run input' },
        { pointer: '/edges/0', message: 'edge out of text_output "out": a text_output ends the graph' },
      ]);
    });
  });

  describe('templates (llm_call.prompt, template nodes)', () => {
    const template = (id: string, text: string) => ({ id, type: 'template', config: { template: text } });

    it('accepts a prompt over inputs and upstream nodes, and a template node; a prompted llm_call needs no edge in', () => {
      const nodes = [
        input('in'),
        template('framed', 'Ticket: {{ inputs.ticket | strip }}'),
        llm('first', { model: 'echo', prompt: 'Summarise {{ inputs.ticket }}' }),
        llm('second', {
          model: 'echo',
          prompt:
            '{% if nodes.first.output != "" %}{{ nodes.first.output | upcase }}{% endif %} / {{ nodes.framed.output }}',
        }),
        output('out'),
      ];
      const edges = [edge('first', 'second'), edge('framed', 'second'), edge('second', 'out')];
      expect(problems(nodes, edges)).toEqual([]);
    });

    it('refuses a reference to an unknown input, a node that is not upstream, an unknown root or field', () => {
      const nodes = [
        input('in'),
        llm('a', {
          model: 'echo',
          prompt: '{{ inputs.tiket }} {{ nodes.b.output }} {{ secret }} {{ nodes.in.text }} {{ inputs.ticket }}',
        }),
        llm('b'),
        output('out'),
      ];
      const edges = [edge('in', 'a'), edge('a', 'b'), edge('b', 'out')];
      expect(problems(nodes, edges)).toEqual([
        { pointer: '/nodes/1/config/prompt', message: '"inputs.tiket": no text_input has the variable "tiket"' },
        {
          pointer: '/nodes/1/config/prompt',
          message: '"nodes.b.output": node "b" is not upstream of this node (add an edge path from it)',
        },
        { pointer: '/nodes/1/config/prompt', message: '"nodes.in.text": a node offers only nodes.in.output' },
        {
          pointer: '/nodes/1/config/prompt',
          message:
            '"secret": unknown variable; a template reads inputs.<variable>, nodes.<id>.output, run.id, run.created_at, workflow.id and workflow.version',
        },
      ]);
    });

    it('refuses a template that is not valid Liquid, or that tries to include a file', () => {
      const nodes = [
        input('in'),
        template('t', '{% if %}'),
        template('u', '{% include "/etc/passwd" %}'),
        output('out'),
      ];
      const edges = [edge('in', 't'), edge('t', 'u'), edge('u', 'out')];
      const result = problems(nodes, edges);
      expect(result.map((p) => p.pointer)).toEqual(['/nodes/1/config/template', '/nodes/2/config/template']);
      expect(result.every((p) => p.message.startsWith('is not a valid Liquid template'))).toBe(true);
    });

    it('checks the template config: required and a string', () => {
      expect(
        configProblems(
          [
            { id: 't', type: 'template', config: {} },
            { id: 'u', type: 'template', config: { template: 3 } },
            llm('l', { model: 'echo', prompt: '' }),
          ],
          [],
        ),
      ).toEqual([
        { pointer: '/nodes/0/config/template', message: 'is required for a template node' },
        { pointer: '/nodes/1/config/template', message: 'must be a string' },
        { pointer: '/nodes/2/config/prompt', message: 'must be 1 to 20000 characters' },
      ]);
    });
  });

  describe('conditions and branches', () => {
    const condition = (id: string, config: Record<string, unknown>) => ({ id, type: 'condition', config });
    const branch = (from: string, to: string, value: string) => ({ from, to, branch: value });

    it('accepts a condition whose edges out carry branch true or false', () => {
      const nodes = [
        input('in'),
        condition('urgent', { left: '{{ inputs.ticket }}', operator: 'contains', right: 'urgent' }),
        llm('page'),
        llm('queue'),
        output('out'),
      ];
      const edges = [
        edge('in', 'urgent'),
        branch('urgent', 'page', 'true'),
        branch('urgent', 'queue', 'false'),
        edge('page', 'out'),
        edge('queue', 'out'),
      ];
      expect(problems(nodes, edges)).toEqual([]);
    });

    it('refuses an edge out of a condition without branch, a bad branch value, and a branch on any other edge', () => {
      const nodes = [
        input('in'),
        condition('c', { left: '{{ inputs.ticket }}', operator: 'empty' }),
        llm('a'),
        llm('b'),
        output('out'),
      ];
      const edges = [
        branch('in', 'c', 'true'),
        edge('c', 'a'),
        branch('c', 'b', 'maybe'),
        edge('a', 'out'),
        edge('b', 'out'),
      ];
      expect(problems(nodes, edges)).toEqual([
        {
          pointer: '/edges/0/branch',
          message: 'only an edge out of a condition node carries a branch ("in" is a text_input)',
        },
        { pointer: '/edges/1', message: 'an edge out of condition "c" needs "branch": "true" or "false"' },
        { pointer: '/edges/2/branch', message: 'must be "true" or "false"' },
      ]);
    });

    it('checks the condition config: operator known, right required by binary operators and refused by unary ones, templates valid', () => {
      const nodes = [
        input('in'),
        condition('a', { left: 'x', operator: 'matches', right: 'y' }),
        condition('b', { left: 'x', operator: 'equals' }),
        condition('c', { left: 'x', operator: 'not_empty', right: 'y' }),
        condition('d', { operator: 'empty' }),
        condition('e', { left: '{{ inputs.nope }}', operator: 'starts_with', right: '{% if %}' }),
      ];
      expect(
        problems(
          nodes,
          ['a', 'b', 'c', 'd', 'e'].map((id) => edge('in', id)),
        ),
      ).toEqual([
        {
          pointer: '/nodes/1/config/operator',
          message:
            'must be one of equals, not_equals, contains, not_contains, starts_with, ends_with, empty, not_empty',
        },
        { pointer: '/nodes/2/config/right', message: 'is required by the operator equals' },
        { pointer: '/nodes/3/config/right', message: 'is not used by the operator not_empty (it looks at left alone)' },
        { pointer: '/nodes/4/config/left', message: 'is required for a condition node' },
        { pointer: '/nodes/5/config/left', message: '"inputs.nope": no text_input has the variable "nope"' },
        { pointer: '/nodes/5/config/right', message: expect.stringMatching(/^is not a valid Liquid template/) },
      ]);
    });
  });

  it('lists every problem at once, nodes before edges, in body order', () => {
    const nodes = [
      input('input', '9x'),
      llm('summarise', { model: 'echo', temperature: 3, max_tokens: 99999 }),
      output('result', 'pdf'),
      output('input'),
    ];
    const edges = [
      edge('input', 'summarise'),
      edge('summarise', 'nowhere'),
      edge('summarise', 'summarise'),
      edge('input', 'summarise'),
    ];
    const result = problems(nodes, edges);
    expect(result).toEqual([
      { pointer: '/nodes/0/config/variable', message: expect.any(String) },
      { pointer: '/nodes/1/config/temperature', message: 'must be <= 2' },
      { pointer: '/nodes/1/config/max_tokens', message: 'must be <= 4096' },
      { pointer: '/nodes/2/config/format', message: 'must be one of plain, markdown, json' },
      { pointer: '/nodes/2', message: 'text_output "result" is not reachable from any text_input' },
      { pointer: '/nodes/3/id', message: 'duplicate node id "input" (also /nodes/0)' },
      { pointer: '/edges/1', message: 'edge refers to unknown node "nowhere"' },
      { pointer: '/edges/2', message: 'edge connects node "summarise" to itself' },
      { pointer: '/edges/3', message: 'duplicate edge "input" -> "summarise" (also /edges/0)' },
    ]);
  });
});
