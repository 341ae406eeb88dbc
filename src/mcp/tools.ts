// A workflow as an MCP tool (the MCP specification's Tool): its name, title, description and the
// JSON Schemas of its arguments and result, derived from the graph alone, so `tools/list` reads no
// more than the workflows themselves.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { givesResult, resultJsonSchemaOf, runInputOf } from '../nodes/registry.ts';
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
 * The result: a run's `output`, an object keyed by result node id, each as its type's
 * `resultJsonSchema` says (a text_output: a text, or with `format: json` any JSON value). None is
 * required, since a branch may leave an output unreached. Undefined when the graph gives no result
 * or a result node's type says nothing of its value: the client then checks nothing.
 */
export function outputSchemaOf(nodes: Nodes): Tool['outputSchema'] {
  const results = nodes.filter(givesResult).filter(isRecord);
  const schemas = results.map(resultJsonSchemaOf);
  if (!results.length || schemas.some((schema) => schema === undefined)) return undefined;
  return {
    type: 'object',
    properties: Object.fromEntries(results.map((node, i) => [String(node.id), schemas[i]!])),
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
