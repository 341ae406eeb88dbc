// What a node type is, in one object: its contract (the openapi.yaml schema of its config), the
// graph rules it adds to the validator's, its console label and its line of docs. Each type is a
// folder of src/nodes holding its definition (index.ts) and its own rules; registry.ts lists them,
// and the graph validator, the config checker, the console and the docs read that list.
import type { ProblemItem } from '../shared/errors.ts';
import type { ValueSchema } from './valueSchemas.ts';

/** A run input a node reads: its name, the JSON type it declares (`string` without one) and its schema. */
export interface RunInput {
  variable: string;
  type: string;
  schema: ValueSchema;
}

/** A workflow a node calls, and the version it pins if it does, with the pointer of its id inside the config. */
export interface CalledWorkflow {
  workflowId: string;
  version?: number;
  pointer: string;
  /** How the node fills the called workflow's run inputs (calledInputs.ts checks it against them). */
  inputs: CalledInputs;
}

/** How a node that calls a workflow fills that workflow's run inputs. */
export interface CalledInputs {
  /** The inputs it names, each with the pointer (inside the config) of where it names it. */
  named: { variable: string; pointer: string }[];
  /** Inputs it fills only when the callee has them (a map's `index`). */
  optional?: string[];
  /** It names none and fills every input with its upstream value (a `workflow` node without `inputs`). */
  passThrough?: boolean;
  /** Where a callee's input that it leaves unfilled is reported (inside the config). */
  pointer: string;
}

/** A graph inside a node's config (a map's body), with its pointer inside the config. */
export interface InnerGraph {
  nodes: unknown;
  edges: unknown;
  pointer: string;
}

/** The limits a graph is checked under that bear on the graphs inside its nodes (workflows/graph.ts GraphLimits). */
export interface InnerGraphLimits {
  maxNodes?: number;
  /** How deep inside inner graphs this graph is (0: a workflow's own graph). */
  depth?: number;
  /** Items a run's maps may take together (RUN_MAX_ITEMS). */
  maxItems?: number;
  /** Inside a map body: the max_items of the maps around it, multiplied, and the items those maps may take together. */
  itemsAbove?: { each: number; total: number };
}

/** What a node's graph rules may read of the graph around it (workflows/subgraphs.ts provides it). */
export interface GraphContext {
  /** How many edges come into the node. */
  edgesIn: number;
  limits: InnerGraphLimits;
  /** The problems of a graph inside the node's config by the workflow's own rules, under these limits. */
  validate(nodes: unknown, edges: unknown, limits: InnerGraphLimits): ProblemItem[];
  /** The run input a node of any graph reads (its type's `runInput`). */
  runInputOf(node: unknown): RunInput | undefined;
  /** Whether a node of any graph gives a result of its graph (its type's `result`). */
  givesResult(node: unknown): boolean;
}

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
  /**
   * The problems of its config past its schema, as pointers inside the config. `faulted`: the
   * pointers whose values its schema already found wrong (a rule may read only sound fields).
   */
  configProblems?(config: Record<string, unknown>, faulted: ReadonlySet<string>): ProblemItem[];
  /** Config fields whose problems come after the others': whether the others belong depends on them. */
  readLast?: readonly string[];
  /** The run input it reads, when its config names one: the run's inputs are these. */
  runInput?(config: Record<string, unknown>): RunInput | undefined;
  /** The model it calls, when its config names one: checked against the models the service serves. */
  calledModel?(config: Record<string, unknown>): string | undefined;
  /** The workflow it calls, when its config names one (checked against the store when the graph is saved). */
  calledWorkflow?(config: Record<string, unknown>): CalledWorkflow | undefined;
  /** The workflows it calls when it may call several (an agent's tools), each as `calledWorkflow` says one. */
  calledWorkflows?(config: Record<string, unknown>): CalledWorkflow[];
  /** The graphs inside its config, each checked as a graph of its own by graphProblems. */
  innerGraphs?(config: Record<string, unknown>): InnerGraph[];
  /**
   * The names an edge out of it picks by its `case`, besides `default` (a switch's cases). A type
   * without this takes no `case` on its edges but `error` (errorRoutes.ts).
   */
  edgeCases?(config: Record<string, unknown>): string[];
  /**
   * The config list whose items' `name`s are its `edgeCases` (a switch's `cases`): the console's
   * editor, which cannot call `edgeCases`, reads the names there and edits the list as cases.
   */
  caseList?: string;
  /**
   * The problems of the node within its graph (its edges, its inner graphs, the limits), as pointers
   * inside the node (`''`: the node itself, `/config/...`); checked after its config and templates.
   */
  graphProblems?(node: { id: string; config: Record<string, unknown> }, graph: GraphContext): ProblemItem[];
  /** Its output needs no node upstream (a run input, another workflow's run): a text_output is reached from it. */
  source?: boolean;
  /** Its output is a result of the run: it must be reached from a source. */
  result?: boolean;
  /** The JSON Schema of the value a result gives the run's `output[<node id>]` (an MCP tool's output schema). */
  resultJsonSchema?(config: Record<string, unknown>): Record<string, unknown>;
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
  /**
   * Its steps `<id>[<n>].<name>`, one per call it made (an agent's tool calls), are listed in its row
   * on a run's page; a map's items are not (they may be thousands: its progress counts them).
   */
  listsCalls?: boolean;
}

/** A node type's definition, its `type` kept as a literal (registry.ts derives the NodeType union from them). */
export const defineNode = <const T extends string>(definition: NodeDefinition<T>): NodeDefinition<T> => definition;

/** The templates held as strings under these config keys. */
export const keyTemplates =
  (...keys: string[]) =>
  (config: Record<string, unknown>): ConfigTemplate[] =>
    keys.flatMap((key) => (typeof config[key] === 'string' ? [{ source: config[key], pointer: `/${key}` }] : []));
