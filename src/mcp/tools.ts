// A workflow as an MCP tool (the MCP specification's Tool): its name, title, description and the
// JSON Schemas of its arguments and result, derived from the graph alone, so `tools/list` reads no
// more than the workflows themselves.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { givesResult, runInputOf } from '../nodes/registry.ts';
import type { Workflow } from '../workflows/service.ts';

/**
 * The tool's name is the workflow's id (`wf_` + ULID): within MCP's name rules (1 to 128 of
 * `A-Z a-z 0-9 _ - .`), unique among the user's tools, and stable when the workflow is renamed,
 * so a client that remembered a tool finds it again. The workflow's name is the tool's title.
 */
export const toolNameOf = (workflow: Pick<Workflow, 'id'>) => workflow.id;

/** A graph's nodes as the registry reads them (any shape: a stored graph may predate a rule). */
type Nodes = readonly unknown[];

/** The arguments: one property per text_input variable, of the type (and schema) it declares, all required. */
export function inputSchemaOf(nodes: Nodes): Tool['inputSchema'] {
  const inputs = nodes.flatMap((node) => runInputOf(node) ?? []);
  return {
    type: 'object',
    properties: Object.fromEntries(inputs.map((input) => [input.variable, input.schema])),
    required: inputs.map((input) => input.variable),
    // A run refuses an input that no text_input declares: say so before the client sends one.
    additionalProperties: false,
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The result: a run's `output`, an object keyed by text_output node id, each a text (or, with
 * `format: json`, any JSON value). Only a graph whose results are all text_output nodes says
 * that much; none is required, since a branch may leave an output unreached. Undefined when the
 * graph gives no result or another kind of node gives one: the client then checks nothing.
 */
export function outputSchemaOf(nodes: Nodes): Tool['outputSchema'] {
  const results = nodes.filter(givesResult).filter(isRecord);
  if (!results.length || results.some((node) => node.type !== 'text_output')) return undefined;
  const schemaOf = (node: Record<string, unknown>) =>
    isRecord(node.config) && node.config.format === 'json' ? {} : { type: 'string' };
  return {
    type: 'object',
    properties: Object.fromEntries(results.map((node) => [String(node.id), schemaOf(node)])),
  };
}

/** The MCP tool of a workflow its owner exposes. */
export function toolOf(workflow: Workflow): Tool {
  const outputSchema = outputSchemaOf(workflow.nodes);
  return {
    name: toolNameOf(workflow),
    title: workflow.name,
    description: workflow.description || `Runs the workflow "${workflow.name}".`,
    inputSchema: inputSchemaOf(workflow.nodes),
    ...(outputSchema ? { outputSchema } : {}),
  };
}
