// What the workflow editor's page hands its script (src/console/browser/editor/): the node types
// with their config schemas (nodeTypes.ts builds them from openapi.yaml), and the live preview's
// answer (views/workflowEditor.ts). Types only, imported by the server and the browser alike, so
// both sides of the page are checked against one shape.

/** A JSON Schema as the contract writes one (the subset the editor's forms read; the rest passes through). */
export interface FieldSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, FieldSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  items?: FieldSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  example?: unknown;
  [keyword: string]: unknown;
}

export interface NodeTypeSpec {
  type: string;
  /** How the console names it ("LLM call"); the type itself for a type the console has no words for. */
  label: string;
  description?: string | undefined;
  config: FieldSchema;
  /** The config list whose items' `name`s an edge out of it picks by `case` (the registry's `caseList`). */
  caseList?: string | undefined;
  /** The contract's example node of this type, when it has one. */
  example?: unknown;
  /** The canvas's handles, from the registry: edges out of it carry a `branch` (true/false). */
  branches?: boolean | undefined;
  /** It may go on past its failure (`on_error: continue`), its `error` edges then followed. */
  routable?: boolean | undefined;
  /** No edge may come into it (a run input), or go out of it (a result). */
  noEdgeIn?: boolean | undefined;
  noEdgeOut?: boolean | undefined;
  /** The config fields that are Liquid templates (the registry's `templates`): offered what is in scope after `{{`. */
  templateFields?: string[] | undefined;
  /** The config fields that are Liquid expressions, without braces (a switch's `value`): offered what is in scope as typed. */
  expressionFields?: string[] | undefined;
  /** The config field naming the model it calls (the registry's `calledModel`): a menu of the served models. */
  modelField?: string | undefined;
}

/** A model the service serves to workflows (GET /api/workflows/models' item). */
export interface ServedModel {
  id: string;
  provider?: string;
  description?: string;
}

export interface EditorSchemas {
  nodeTypes: NodeTypeSpec[];
  /** WorkflowEdge: what an edge may carry besides its ends (`branch`). */
  edge: FieldSchema;
  /** The models a node may name (the page adds them: they follow the service's configuration). */
  models?: ServedModel[];
  /** The provider serves any model name: a node may name one not listed. */
  acceptsOtherModels?: boolean;
}

/** A problem of the graph as written, with where it points in words (`node "page", config.model`). */
export interface PlacedProblem {
  pointer: string;
  message: string;
  label: string;
  nodeId?: string;
}

/** POST /workflows/editor/preview's answer: the picture (SVG markup; null when the JSON does not read) and the problems. */
export interface EditorPreview {
  graph: string | null;
  problems: PlacedProblem[];
  /** By node id, what its templates may read (`inputs.ticket`, `nodes.classify.output.category`, `run.id`). */
  scopes?: Record<string, string[]>;
  /** By template field's pointer, its text rendered with the last run's values, or why it could not be. */
  rendered?: Record<string, { text?: string; error?: string }>;
  /** Where the rendered values come from (`run_…`, started when), or null when there is no run yet. */
  renderedFrom?: string | null;
}
