import { describe, expect, it } from 'vitest';
import { inputSchemaOf, outputSchemaOf, toolOf } from './tools.ts';
import type { Workflow } from '../workflows/service.ts';

describe('a workflow as an MCP tool', () => {
  const nodes = [
    { id: 'in', type: 'text_input', config: { variable: 'ticket' } },
    { id: 'n', type: 'text_input', config: { variable: 'count', type: 'integer' } },
    {
      id: 'o',
      type: 'text_input',
      config: { variable: 'order', type: 'object', schema: { properties: { id: { type: 'string' } } } },
    },
    { id: 'plain', type: 'text_output', config: { format: 'plain' } },
    { id: 'data', type: 'text_output', config: { format: 'json' } },
  ];

  it('takes one required argument per text_input, of its declared type and schema, and no other', () => {
    expect(inputSchemaOf(nodes)).toEqual({
      type: 'object',
      properties: {
        ticket: { type: 'string' },
        count: { type: 'integer' },
        order: { type: 'object', properties: { id: { type: 'string' } } },
      },
      required: ['ticket', 'count', 'order'],
      additionalProperties: false,
    });
    expect(inputSchemaOf([])).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
  });

  it('describes its output by text_output node id (text, or any JSON value for format json), none required', () => {
    expect(outputSchemaOf(nodes)).toEqual({ type: 'object', properties: { plain: { type: 'string' }, data: {} } });
  });

  it('declares no output schema for a graph without a result, or whose result another kind of node gives', () => {
    expect(outputSchemaOf(nodes.slice(0, 3))).toBeUndefined();
    expect(outputSchemaOf([{ id: 'x', type: 'no_such_type', config: {} }])).toBeUndefined();
  });

  it('is named by the workflow id (stable across renames) and titled by its name; the description falls back to the name', () => {
    const workflow = {
      id: 'wf_01JD6Z3V8Q4X2M7N5P9R0T1W',
      name: 'Triage',
      description: '',
      nodes,
      edges: [],
    } as unknown as Workflow;
    const tool = toolOf(workflow);
    expect(tool).toMatchObject({ name: workflow.id, title: 'Triage', description: 'Runs the workflow "Triage".' });
    expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/); // MCP's tool name rules
  });
});
