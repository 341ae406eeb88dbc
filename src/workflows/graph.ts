// Validation of a workflow graph (openapi.yaml WorkflowNode / WorkflowEdge, DESIGN.md "Workflow
// graph"). It checks the raw body itself, not only what passed the contract validator, so that a
// single 422 can list every problem at once: schema-level (config per type) and semantic ones
// (ids, edges, cycles, reachability) together.
import type { components } from '../../generated/api.d.ts';
import { configProblems, escapePointer } from './nodeConfig.ts';
import { checkTemplates, templatedNodes } from './graphTemplates.ts';
import { cycles } from './cycles.ts';
import {
  definitionOf,
  findNodeDefinition,
  isNodeType,
  NODE_TYPES,
  nodeDefinition,
  type NodeType,
} from '../nodes/registry.ts';
import { caseProblem } from '../nodes/edgeCases.ts';
import { continuesOnError, defaultProblem } from '../nodes/errorRoutes.ts';
import { checkSubgraphNodes } from './subgraphs.ts';
import type { ProblemItem } from '../shared/errors.ts';

export type WorkflowNode = components['schemas']['WorkflowNode'];
export type WorkflowEdge = components['schemas']['WorkflowEdge'];

export interface GraphLimits {
  /** Highest `max_tokens` an `llm_call` node may ask for (config WORKFLOW_MAX_TOKENS_LIMIT). */
  maxTokens: number;
  /** Most nodes a workflow may have (config WORKFLOW_MAX_NODES); the contract's 500 when absent. */
  maxNodes?: number;
  /**
   * The models this service serves when that list is fixed (MODEL_PROVIDER_MODELS, or `echo`
   * alone without a provider); undefined when any model may be served.
   */
  models?: readonly string[] | undefined;
  /** How deep inside map bodies this graph is (0: a workflow's own graph). */
  depth?: number;
  /** Items a run's maps may take together (config RUN_MAX_ITEMS); nested maps' max_items multiplied may not pass it. */
  maxItems?: number;
  /** Inside a map body: the max_items of the maps around it, multiplied, and the items those maps may take together. */
  itemsAbove?: { each: number; total: number };
}

// The same bounds as openapi.yaml; the contract is the source, these mirror it.
const MAX_NODES = 500;
const MAX_EDGES = 2000;
const NODE_ID = /^[A-Za-z0-9_-]+$/;
const NODE_ID_MAX = 64;

type Report = (pointer: string, message: string) => void;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkUnknownKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  at: string,
  report: Report,
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) report(`${at}/${escapePointer(key)}`, `unknown property "${key}"`);
  }
}

// NodeLayout's bound: a canvas position, kept as sent, that the engine never reads.
const LAYOUT_BOUND = 1_000_000;

/** A node's `ui`: `{x, y}`, two bounded numbers and nothing else (the canvas's position of it). */
function checkLayout(ui: unknown, at: string, report: Report): void {
  if (!isObject(ui)) return report(at, 'must be an object with x and y');
  checkUnknownKeys(ui, ['x', 'y'], at, report);
  for (const axis of ['x', 'y'] as const) {
    const value = ui[axis];
    if (value === undefined) report(`${at}/${axis}`, 'is required');
    else if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > LAYOUT_BOUND)
      report(`${at}/${axis}`, `must be a number from -${LAYOUT_BOUND} to ${LAYOUT_BOUND}`);
  }
}

function checkNodeId(value: unknown, at: string, report: Report): value is string {
  if (typeof value !== 'string') {
    report(at, 'must be a string');
    return false;
  }
  if (value.length < 1 || value.length > NODE_ID_MAX) {
    report(at, `must be 1 to ${NODE_ID_MAX} characters`);
    return false;
  }
  if (!NODE_ID.test(value)) {
    report(at, 'must contain only letters, digits, "_" and "-"');
    return false;
  }
  return true;
}

/** A node's config against its type's schema in openapi.yaml (nodeConfig.ts), and its type's own rules (nodes/). */
function checkConfig(
  type: NodeType,
  config: Record<string, unknown>,
  at: string,
  limits: GraphLimits,
  report: Report,
): void {
  const definition = nodeDefinition(type);
  const problems = configProblems(type, config, limits.maxTokens);
  const faulted = new Set(problems.map((p) => p.pointer));
  for (const { pointer, message } of [...problems, ...(definition.configProblems?.(config, faulted) ?? [])])
    report(`${at}${pointer}`, message);
  const badDefault = defaultProblem(definition.routable === true, config);
  if (badDefault) report(`${at}${badDefault.pointer}`, badDefault.message);
}

interface NodeFacts {
  /** Index of the first node with each id. */
  indexById: Map<string, number>;
  typeById: Map<string, NodeType>;
  /** The case names each node picks among by its edges' `case` (its type's `edgeCases`). */
  casesById: Map<string, string[]>;
  /** The nodes that go on past their failure, whose errors edges may carry (nodes/errorRoutes.ts). */
  continuing: Set<string>;
}

function checkNodes(nodes: unknown[], limits: GraphLimits, report: Report): NodeFacts {
  const indexById = new Map<string, number>();
  const typeById = new Map<string, NodeType>();
  const casesById = new Map<string, string[]>();
  const continuing = new Set<string>();
  nodes.forEach((node, i) => {
    const at = `/nodes/${i}`;
    if (!isObject(node)) {
      report(at, 'must be an object with id, type and config');
      return;
    }
    checkUnknownKeys(node, ['id', 'type', 'ui', 'config'], at, report);
    if (node.ui !== undefined) checkLayout(node.ui, `${at}/ui`, report);

    let id: string | undefined;
    if (node.id === undefined) report(`${at}/id`, 'is required');
    else if (checkNodeId(node.id, `${at}/id`, report)) id = node.id;
    if (id !== undefined) {
      const first = indexById.get(id);
      if (first === undefined) indexById.set(id, i);
      else report(`${at}/id`, `duplicate node id "${id}" (also /nodes/${first})`);
    }

    if (node.type === undefined) report(`${at}/type`, 'is required');
    else if (!isNodeType(node.type))
      report(`${at}/type`, `unknown node type ${JSON.stringify(node.type)}; known: ${NODE_TYPES.join(', ')}`);
    const type = isNodeType(node.type) ? node.type : undefined;
    if (id !== undefined && type !== undefined && !typeById.has(id)) typeById.set(id, type);
    const edgeCases = findNodeDefinition(type)?.edgeCases;
    if (id !== undefined && edgeCases && isObject(node.config)) casesById.set(id, edgeCases(node.config));

    if (id !== undefined && continuesOnError(findNodeDefinition(type)?.routable === true, node.config))
      continuing.add(id);
    if (node.config === undefined) report(`${at}/config`, 'is required');
    else if (!isObject(node.config)) report(`${at}/config`, 'must be an object');
    else if (type !== undefined) checkConfig(type, node.config, `${at}/config`, limits, report);
  });
  return { indexById, typeById, casesById, continuing };
}

/** Checks each edge; returns the edges usable for graph checks (both ends exist, no self-loop, not a repeat). */
function checkEdges(edges: unknown[], facts: NodeFacts, report: Report): { from: string; to: string; index: number }[] {
  const usable: { from: string; to: string; index: number }[] = [];
  const seen = new Map<string, number>();
  edges.forEach((edge, i) => {
    const at = `/edges/${i}`;
    if (!isObject(edge)) {
      report(at, 'must be an object with from and to');
      return;
    }
    checkUnknownKeys(edge, ['from', 'to', 'branch', 'case'], at, report);
    let ends = true;
    for (const end of ['from', 'to'] as const) {
      if (edge[end] === undefined) {
        report(`${at}/${end}`, 'is required');
        ends = false;
      } else if (!checkNodeId(edge[end], `${at}/${end}`, report)) ends = false;
    }
    if (!ends) return;
    const from = edge.from as string;
    const to = edge.to as string;
    const unknown = [from, to].filter((id, k, all) => !facts.indexById.has(id) && all.indexOf(id) === k);
    for (const id of unknown) report(at, `edge refers to unknown node "${id}"`);
    if (from === to) {
      report(at, `edge connects node "${from}" to itself`);
      return;
    }
    const key = JSON.stringify([from, to, edge.case]);
    const first = seen.get(key);
    if (first !== undefined) {
      report(at, `duplicate edge "${from}" -> "${to}" (also /edges/${first})`);
      return;
    }
    seen.set(key, i);
    // A text_input's text is its run input and a text_output's is the run's result: an edge into
    // the one or out of the other would carry nothing anywhere.
    const fromType = facts.typeById.get(from);
    const toType = facts.typeById.get(to);
    const noEdgeIn = findNodeDefinition(toType)?.noEdgeIn;
    const noEdgeOut = findNodeDefinition(fromType)?.noEdgeOut;
    if (noEdgeIn) report(at, `edge into ${toType} "${to}": ${noEdgeIn}`);
    if (noEdgeOut) report(at, `edge out of ${fromType} "${from}": ${noEdgeOut}`);
    checkBranch(edge.branch, fromType, from, at, report);
    const fromDefinition = findNodeDefinition(fromType);
    const badCase = caseProblem(
      edge.case,
      fromType,
      fromDefinition?.edgeCases ? (facts.casesById.get(from) ?? []) : undefined,
      from,
      facts.continuing.has(from),
      fromDefinition?.routable === true,
    );
    if (badCase) report(badCase.pointer === '' ? at : `${at}${badCase.pointer}`, badCase.message);
    if (unknown.length === 0) usable.push({ from, to, index: i });
  });
  return usable;
}

/** An edge out of a condition (a type whose definition has `branches`) says which branch it follows; no other edge does. */
function checkBranch(branch: unknown, fromType: string | undefined, from: string, at: string, report: Report): void {
  if (findNodeDefinition(fromType)?.branches) {
    if (branch === undefined) report(at, `an edge out of ${fromType} "${from}" needs "branch": "true" or "false"`);
    else if (branch !== 'true' && branch !== 'false') report(`${at}/branch`, 'must be "true" or "false"');
  } else if (branch !== undefined && fromType !== undefined) {
    report(`${at}/branch`, `only an edge out of a condition node carries a branch ("${from}" is a ${fromType})`);
  }
}

/**
 * Every problem of a workflow graph, as JSON pointers into the workflow (`/nodes/1/config/model`,
 * `/edges/0`). An empty list means the graph is valid. `nodes` and `edges` are the raw request
 * values: nothing about their shape is assumed.
 */
export function validateWorkflowGraph(nodes: unknown, edges: unknown, limits: GraphLimits): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const report: Report = (pointer, message) => problems.push({ pointer, message });

  const nodeList = Array.isArray(nodes) ? nodes : [];
  const edgeList = Array.isArray(edges) ? edges : [];
  if (!Array.isArray(nodes)) report('/nodes', 'must be an array');
  else if (nodes.length > Math.min(limits.maxNodes ?? MAX_NODES, MAX_NODES))
    report('/nodes', `must have at most ${Math.min(limits.maxNodes ?? MAX_NODES, MAX_NODES)} nodes`);
  if (!Array.isArray(edges)) report('/edges', 'must be an array');
  else if (edges.length > MAX_EDGES) report('/edges', `must have at most ${MAX_EDGES} edges`);

  if (Array.isArray(nodes) && nodes.length === 0)
    report('/nodes', 'a workflow needs at least one node (a text_input feeding a text_output, for a start)');
  const facts = checkNodes(nodeList, limits, report);
  const usable = checkEdges(edgeList, facts, report);
  checkModels(nodeList, limits, report);
  const templated = templatedNodes(nodeList, facts.indexById);
  for (const [id, index] of facts.indexById) {
    const type = facts.typeById.get(id);
    const upstreamOr = findNodeDefinition(type)?.upstreamOr;
    if (upstreamOr !== undefined && !templated.has(id) && !usable.some((e) => e.to === id)) {
      report(
        `/nodes/${index}`,
        `${type} "${id}" has no upstream node: connect an edge into it, or give it a ${upstreamOr}`,
      );
    }
  }
  checkTemplates(nodeList, usable, templated, report);
  checkSubgraphNodes(nodeList, facts.indexById, usable, limits, validateWorkflowGraph, report);

  const ids = [...facts.indexById.keys()];
  for (const component of cycles(ids, usable)) {
    const members = new Set(component);
    const closing = usable.find((e) => members.has(e.from) && members.has(e.to))!;
    report(`/edges/${closing.index}`, `edges form a cycle through ${component.map((id) => `"${id}"`).join(', ')}`);
  }

  // Every text_output must be fed, however indirectly, by a text_input: otherwise it can never
  // produce output. Only nodes whose type is known take part.
  const reached = new Set<string>();
  // A template reading run inputs is fed by them as surely as by an edge from a text_input.
  const queue = ids.filter((id) => findNodeDefinition(facts.typeById.get(id))?.source === true || templated.has(id));
  for (const id of queue) reached.add(id);
  const next = new Map<string, string[]>();
  for (const e of usable) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const to of next.get(id) ?? []) {
      if (!reached.has(to)) {
        reached.add(to);
        queue.push(to);
      }
    }
  }
  for (const [id, index] of facts.indexById) {
    const type = facts.typeById.get(id);
    if (findNodeDefinition(type)?.result && !reached.has(id)) {
      report(`/nodes/${index}`, `${type} "${id}" is not reachable from any text_input`);
    }
  }

  return sortProblems(problems);
}

/** Fields first, then /nodes, then /edges, each by index (a stable sort keeps the rest in order). */
export const sortProblems = (problems: ProblemItem[]): ProblemItem[] =>
  [...problems].sort((a, b) => comparePointers(a.pointer, b.pointer));

/** With a fixed model list, a node calling another model (its type's `calledModel`) could only fail at run time. */
function checkModels(nodes: unknown[], limits: GraphLimits, report: Report): void {
  if (!limits.models) return;
  nodes.forEach((node, i) => {
    if (!isObject(node) || !isObject(node.config)) return;
    const model = definitionOf(node)?.calledModel?.(node.config);
    if (model === undefined || model.trim() === '' || limits.models!.includes(model)) return;
    report(
      `/nodes/${i}/config/model`,
      `unknown model ${JSON.stringify(model)}; this service serves ${limits.models!.join(', ')}`,
    );
  });
}

/** Orders problems as a reader scans the body: /nodes before /edges, then by index. */
function comparePointers(a: string, b: string): number {
  const rank = (p: string) => (p.startsWith('/nodes') ? 1 : p.startsWith('/edges') ? 2 : 0);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  const index = (p: string) => Number(/^\/\w+\/(\d+)/.exec(p)?.[1] ?? -1);
  return index(a) - index(b);
}

const NAME_MAX = 200;
const DESCRIPTION_MAX = 10000;

/**
 * The problems of a create or update body outside its graph (`name`, `description`, unknown
 * keys), as pointers into the workflow like the graph's (`/name`): listed in the same 422 when
 * the graph has problems too.
 */
export function validateWorkflowFields(body: Record<string, unknown>, operation: 'create' | 'update'): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const report: Report = (pointer, message) => problems.push({ pointer, message });
  checkUnknownKeys(body, ['name', 'description', 'nodes', 'edges'], '', report);
  if (operation === 'create' && body.name === undefined) report('/name', 'is required');
  if (body.name !== undefined) {
    if (typeof body.name !== 'string') report('/name', 'must be a string');
    else if (body.name.length < 1 || body.name.length > NAME_MAX)
      report('/name', `must be 1 to ${NAME_MAX} characters`);
    else if (body.name.includes('\u0000')) report('/name', 'must not contain NUL characters');
  }
  if (body.description !== undefined) {
    if (typeof body.description !== 'string') report('/description', 'must be a string');
    else if (body.description.length > DESCRIPTION_MAX)
      report('/description', `must be at most ${DESCRIPTION_MAX} characters`);
    else if (body.description.includes('\u0000')) report('/description', 'must not contain NUL characters');
  }
  return problems;
}
