// Typed values in templates and in graph validation: templates read fields of
// JSON values and have `json` and `parse_json`; a field reference is checked against the schema
// its value declares when the workflow is saved.
import { describe, expect, it } from 'vitest';
import { renderTemplate } from './templates.ts';
import { validateWorkflowGraph } from './graph.ts';

const limits = { maxTokens: 4096 };
const invoice = {
  type: 'object',
  required: ['amount'],
  properties: {
    amount: { type: 'number' },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
  },
};
const extract = (schema: unknown = invoice) => ({
  id: 'extract',
  type: 'llm_call',
  config: { model: 'echo', response_format: { type: 'json_schema', json_schema: { name: 'invoice', schema } } },
});
const graph = (prompt: string, first: unknown = extract()) => ({
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    first,
    { id: 'use', type: 'template', config: { template: prompt } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'extract' },
    { from: 'extract', to: 'use' },
    { from: 'use', to: 'out' },
  ],
});
const problems = (g: { nodes: unknown; edges: unknown }) => validateWorkflowGraph(g.nodes, g.edges, limits);

describe('templates over JSON values', () => {
  const scope = {
    inputs: { order: { amount: 12.5, tags: ['a', 'b'] } },
    nodes: { extract: { output: { amount: 3, urgent: true } } },
  };

  it('reads fields of objects and items of lists', async () => {
    expect(
      await renderTemplate(
        '{{ nodes.extract.output.amount }} {{ inputs.order.tags[1] }} {{ inputs.order.tags.size }}',
        scope,
      ),
    ).toBe('3 b 2');
    expect(await renderTemplate('{% if nodes.extract.output.urgent %}urgent{% endif %}', scope)).toBe('urgent');
  });

  it('prints a whole object or list as its JSON, not [object Object]', async () => {
    expect(await renderTemplate('{{ nodes.extract.output }} {{ inputs.order.tags }}', scope)).toBe(
      '{"amount":3,"urgent":true} ["a","b"]',
    );
  });

  it('has json (a value as JSON text) and parse_json (a JSON text as a value)', async () => {
    expect(await renderTemplate('{{ inputs.order | json }}', scope)).toBe('{"amount":12.5,"tags":["a","b"]}');
    expect(
      await renderTemplate('{% assign v = inputs.raw | parse_json %}{{ v.total }}', {
        inputs: { raw: '{"total": 7}' },
        nodes: {},
      }),
    ).toBe('7');
  });

  it('fails the render when parse_json meets text that is not JSON', async () => {
    await expect(
      renderTemplate('{{ inputs.raw | parse_json }}', { inputs: { raw: 'not json' }, nodes: {} }),
    ).rejects.toThrow(/parse_json: the text is not JSON/);
  });
});

describe('field references against declared schemas (422 on save)', () => {
  it('accepts fields the schema declares, through objects and list items', () => {
    expect(
      problems(
        graph(
          '{{ nodes.extract.output.amount }} {{ nodes.extract.output.lines[0].sku }} {{ nodes.extract.output.lines.size }}',
        ),
      ),
    ).toEqual([]);
  });

  it('refuses a field the schema does not declare, naming the ones it has', () => {
    expect(problems(graph('{{ nodes.extract.output.amont }}'))).toEqual([
      {
        pointer: '/nodes/2/config/template',
        message: '"nodes.extract.output.amont": the schema has no field "amont" (it has amount, lines)',
      },
    ]);
  });

  it('refuses a field of a number and a named field of a list', () => {
    expect(
      problems(graph('{{ nodes.extract.output.amount.cents }} {{ nodes.extract.output.lines.sku }}')).map(
        (p) => p.message,
      ),
    ).toEqual([
      '"nodes.extract.output.amount.cents": the value is a number, with no field "cents"',
      '"nodes.extract.output.lines.sku": the value is a list, with no field "sku" (read an item by its index)',
    ]);
  });

  it('accepts any field of a json_object answer or a schema that allows more properties; refuses one of a text answer', () => {
    const jsonObject = {
      id: 'extract',
      type: 'llm_call',
      config: { model: 'echo', response_format: { type: 'json_object' } },
    };
    expect(problems(graph('{{ nodes.extract.output.anything }}', jsonObject))).toEqual([]);
    expect(
      problems(
        graph(
          '{{ nodes.extract.output.x }}',
          extract({ type: 'object', properties: { a: {} }, additionalProperties: true }),
        ),
      ),
    ).toEqual([]);
    const text = { id: 'extract', type: 'llm_call', config: { model: 'echo' } };
    expect(problems(graph('{{ nodes.extract.output.amount }}', text))).toEqual([
      {
        pointer: '/nodes/2/config/template',
        message: '"nodes.extract.output.amount": a node offers only nodes.extract.output',
      },
    ]);
  });

  it('reads fields of a typed text_input by its schema; a text input has none', () => {
    const nodes = [
      {
        id: 'order',
        type: 'text_input',
        config: {
          variable: 'order',
          type: 'object',
          schema: { type: 'object', properties: { amount: { type: 'number' } } },
        },
      },
      { id: 'note', type: 'text_input', config: { variable: 'note' } },
      {
        id: 'use',
        type: 'template',
        config: {
          template:
            '{{ inputs.order.amount }} {{ inputs.order.total }} {{ inputs.note.x }} {{ nodes.order.output.amount }}',
        },
      },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const edges = [
      { from: 'order', to: 'use' },
      { from: 'note', to: 'use' },
      { from: 'use', to: 'out' },
    ];
    expect(problems({ nodes, edges }).map((p) => p.message)).toEqual([
      '"inputs.order.total": the schema has no field "total" (it has amount)',
      '"inputs.note.x": an input is text, with no field "x" (declare the text_input\'s type to read fields)',
    ]);
  });

  it('refuses a schema that is not a JSON Schema, a json_schema format without one, and a schema on a string input', () => {
    const nodes = [
      { id: 'in', type: 'text_input', config: { variable: 'text', schema: { type: 'object' } } },
      { id: 'a', type: 'llm_call', config: { model: 'echo', response_format: { type: 'json_schema' } } },
      {
        id: 'b',
        type: 'llm_call',
        config: {
          model: 'echo',
          response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'objet' } } },
        },
      },
      {
        id: 'c',
        type: 'llm_call',
        config: { model: 'echo', response_format: { type: 'json_object', json_schema: { name: 'x', schema: {} } } },
      },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    const edges = [
      { from: 'in', to: 'a' },
      { from: 'in', to: 'b' },
      { from: 'in', to: 'c' },
      { from: 'a', to: 'out' },
      { from: 'b', to: 'out' },
      { from: 'c', to: 'out' },
    ];
    const found = problems({ nodes, edges });
    expect(found.map((p) => p.pointer)).toEqual([
      '/nodes/0/config/schema',
      '/nodes/1/config/response_format/json_schema',
      '/nodes/2/config/response_format/json_schema/schema',
      '/nodes/3/config/response_format/json_schema',
    ]);
    expect(found[0]!.message).toBe('is only for a text_input whose type is object or array');
    expect(found[2]!.message).toMatch(/^is not a valid JSON Schema: /);
  });

  it("refuses an unknown text_input type and response_format type with the contract's enum", () => {
    const nodes = [
      { id: 'in', type: 'text_input', config: { variable: 'text', type: 'date' } },
      { id: 'a', type: 'llm_call', config: { model: 'echo', response_format: { type: 'yaml' } } },
      { id: 'out', type: 'text_output', config: { format: 'plain' } },
    ];
    expect(
      problems({
        nodes,
        edges: [
          { from: 'in', to: 'a' },
          { from: 'a', to: 'out' },
        ],
      }),
    ).toEqual([
      { pointer: '/nodes/0/config/type', message: 'must be one of string, number, integer, boolean, object, array' },
      { pointer: '/nodes/1/config/response_format/type', message: 'must be one of text, json_object, json_schema' },
    ]);
  });
});
