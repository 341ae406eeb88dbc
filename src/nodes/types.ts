// What a node type is, in one object: its contract (the openapi.yaml schema of its config), the
// graph rules it adds to the validator's, its console label and its line of docs. Each type is a
// folder of src/nodes holding its definition (index.ts) and its own rules; registry.ts lists them,
// and the graph validator, the config checker, the console and the docs read that list.
import type { ProblemItem } from '../shared/errors.ts';
import type { ValueSchema } from './valueSchemas.ts';

/** A Liquid text inside a node's config, with its pointer inside the config (`/prompt`). */
export interface ConfigTemplate {
  source: string;
  pointer: string;
}

export interface NodeDefinition<T extends string = string> {
  /** The node's `type` in a workflow's graph. */
  type: T;
  /** Its schema in openapi.yaml's components (a branch of WorkflowNode), whose `config` is checked by nodeConfig.ts. */
  schema: string;
  /** How the console names it (graph pictures, the editor's palette). */
  label: string;
  /** What it does, in one line (the docs' node table). */
  docs: string;
  /** The Liquid texts of its config, checked when the graph is saved (they must parse and read only what is upstream). */
  templates?(config: Record<string, unknown>): ConfigTemplate[];
  /** The schema of its output as its config declares it (valueSchemas.ts); without this, any value. */
  output?(config: Record<string, unknown>): ValueSchema;
  /** The problems of its config past its schema, as pointers inside the config. */
  configProblems?(config: Record<string, unknown>): ProblemItem[];
  /** Its output needs no node upstream (a run input, another workflow's run): a text_output is reached from it. */
  source?: boolean;
  /** Its output is a result of the run: it must be reached from a source. */
  result?: boolean;
  /** Without this config template it works on its upstream texts, so it then needs an edge into it. */
  upstreamOr?: string;
  /** It may go on past its failure (`on_error: continue`): its `default` and its `case: "error"` edges. */
  routable?: boolean;
  /** Why no edge may come into it, when none may. */
  noEdgeIn?: string;
  /** Why no edge may go out of it, when none may. */
  noEdgeOut?: string;
  /** Edges out of it carry a `branch` (its verdict, "true" or "false"). */
  branches?: boolean;
}

/** A node type's definition, its `type` kept as a literal (registry.ts derives the NodeType union from them). */
export const defineNode = <const T extends string>(definition: NodeDefinition<T>): NodeDefinition<T> => definition;

/** The templates held as strings under these config keys. */
export const keyTemplates =
  (...keys: string[]) =>
  (config: Record<string, unknown>): ConfigTemplate[] =>
    keys.flatMap((key) => (typeof config[key] === 'string' ? [{ source: config[key], pointer: `/${key}` }] : []));
