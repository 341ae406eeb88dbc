// The node types, in one list: the graph validator (workflows/graph.ts), the config checker
// (workflows/nodeConfig.ts), the console (graph labels, the editor's palette) and the docs read it.
// A new node type is a folder beside these (its definition in index.ts, see types.ts), one line
// here, and its schema in openapi.yaml (a branch of WorkflowNode); registry.test.ts checks the three agree.
import type { NodeDefinition, RunInput } from './types.ts';
import { textInput } from './text_input/index.ts';
import { llmCall } from './llm_call/index.ts';
import { template } from './template/index.ts';
import { condition } from './condition/index.ts';
import { textOutput } from './text_output/index.ts';
import { httpRequest } from './http_request/index.ts';
import { switchNode } from './switch/index.ts';
import { coalesce } from './coalesce/index.ts';
import { split } from './split/index.ts';
import { map } from './map/index.ts';
import { workflow } from './workflow/index.ts';
import { agent } from './agent/index.ts';
import { approval } from './approval/index.ts';

/** Every node type, in the order the 422 for an unknown type lists them. */
export const NODE_REGISTRY = [
  textInput,
  llmCall,
  template,
  condition,
  textOutput,
  httpRequest,
  switchNode,
  coalesce,
  split,
  map,
  workflow,
  agent,
  approval,
] as const;

export type NodeType = (typeof NODE_REGISTRY)[number]['type'];

export const NODE_TYPES: readonly NodeType[] = NODE_REGISTRY.map((definition) => definition.type);

const byType = new Map<string, NodeDefinition<NodeType>>(
  NODE_REGISTRY.map((definition) => [definition.type, definition]),
);

export const isNodeType = (value: unknown): value is NodeType => typeof value === 'string' && byType.has(value);

/** The definition of a registered type. */
export const nodeDefinition = (type: NodeType): NodeDefinition<NodeType> => byType.get(type)!;

/** The definition of a type that may not be registered (a graph's raw input, a stored run's). */
export const findNodeDefinition = (type: string | undefined): NodeDefinition<NodeType> | undefined =>
  type === undefined ? undefined : byType.get(type);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The definition of a node of any shape (a graph's raw input), when its type is registered. */
export const definitionOf = (node: unknown): NodeDefinition<NodeType> | undefined =>
  isObject(node) && typeof node.type === 'string' ? byType.get(node.type) : undefined;

/** The run input a node of any shape reads (its type's `runInput`), when it reads one. */
export const runInputOf = (node: unknown): RunInput | undefined =>
  isObject(node) && isObject(node.config) ? definitionOf(node)?.runInput?.(node.config) : undefined;

/** Whether a node of any shape gives a result of its graph (its type's `result`). */
export const givesResult = (node: unknown): boolean => definitionOf(node)?.result === true;

/** The JSON Schema of a result node's value in the run's output (its type's `resultJsonSchema`), when its type says. */
export const resultJsonSchemaOf = (node: unknown): Record<string, unknown> | undefined =>
  isObject(node) && isObject(node.config) ? definitionOf(node)?.resultJsonSchema?.(node.config) : undefined;
