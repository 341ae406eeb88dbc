// What the executor (executor.ts) and the work of each node type (steps/) share: a run's working
// state and the hooks that log its steps. Kept apart from executor.ts so that steps/ sits below it.
import type { components } from '../../generated/api.d.ts';
import type { TemplateScope } from '../workflows/templates.ts';
import type { RunFailure } from '../shared/errors.ts';
import type { RunBudget } from './compute/budget.ts';
import type { HttpNodes } from './httpRequest.ts';
import type { ModelRouter, Usage } from './providers/index.ts';
import type { CostNanos } from '../shared/prices.ts';
import type { Produced } from './values.ts';
import type { TextBudget } from './textBudget.ts';
import type { CompositeContext } from './nodes/composite.ts';
import type { StepHooks } from './nodes/subgraph.ts';
import type { ApprovalLookup } from './awaitingAnswer.ts';

export type WorkflowNode = components['schemas']['WorkflowNode'];
export type WorkflowEdge = components['schemas']['WorkflowEdge'];

export interface StepReport {
  nodeId: string;
  nodeType: WorkflowNode['type'];
  status: 'completed' | 'failed' | 'cancelled' | 'waiting';
  input: string;
  /** The output as text (a value that is not a string as its JSON); null unless completed. */
  output: string | null;
  /** The output is a JSON value other than a string, whose JSON `output` is. */
  outputIsJson?: boolean;
  usage: Usage | null;
  /** What `usage` cost at the price table when the node ran (src/shared/prices.ts); null or absent: no priced model. */
  cost?: CostNanos | null;
  /** The model the node called (its config's `model`), for the metrics; absent for a node that calls none. */
  model?: string;
  error: RunFailure | null;
  /** Calls to the model provider (1 plus retries); null for a node that made none. */
  attempts: number | null;
  /** A switch's chosen case (or `default`), stored with its step; absent for other nodes. */
  case?: string;
}

export interface ExecutionHooks extends Pick<StepHooks<StepReport>, 'onMapProgress'> {
  onStepStart?(node: WorkflowNode, input: string): Promise<void> | void;
  /** A chunk of an llm_call's answer as the provider streams it (the texts, in order, make its output). */
  onStepDelta?(node: WorkflowNode, text: string): void;
  /** A node's call is tried again after `delayMs` (an llm_call's provider call, an http_request): what it streamed so far is void. */
  onStepRetry?(node: WorkflowNode, attempt: number, error: { code: string; message: string }, delayMs: number): void;
  onStepEnd?(report: StepReport): Promise<void> | void;
  /** An approval node waits for its answer: its step stays open, `waiting`. */
  onStepWaiting?(node: WorkflowNode): Promise<void> | void;
  /** The node will not run: every way into it came through a branch not taken. */
  onStepSkipped?(node: WorkflowNode): Promise<void> | void;
  /** Asked before each node starts; false stops the run as cancelled (the run's own state). */
  shouldContinue?(): Promise<boolean> | boolean;
}

/** One run's working state, shared by its nodes. */
export interface RunState {
  inputs: Record<string, unknown>;
  models: ModelRouter;
  hooks: ExecutionHooks;
  signal: AbortSignal;
  byId: Map<string, WorkflowNode>;
  edgesIn: Map<string, WorkflowEdge[]>;
  /** Each node's output once done; null when it was skipped. */
  texts: Map<string, Promise<Produced | null>>;
  /** What templates see: the run's inputs and each finished node's output. */
  scope: TemplateScope;
  /** Each condition's text (`true` / `false`), set when its sides are rendered. */
  verdicts: Map<string, string>;
  /** Each llm_call's count of provider calls so far, as its provider reports them (onAttempt). */
  attempts: Map<string, number>;
  output: Record<string, unknown>;
  sizes: TextBudget;
  http: HttpNodes;
  /** The texts of the nodes an earlier attempt of the run finished: they are not run again. */
  resumed: ReadonlyMap<string, unknown>;
  render(source: string): Promise<string>;
  budget: RunBudget;
  /** What split, map and workflow nodes work with (nodes/composite.ts). */
  composite: CompositeContext;
  /** An approval node's answer, in a run's own graph only (not a map's item or a called workflow). */
  approvals?: ApprovalLookup;
}

/** What a node's work gives: its value, the model's usage, and for a switch the case it chose. */
export interface StepDone {
  value: unknown;
  usage: Usage | null;
  route?: string;
}

/**
 * How a node of one type runs (steps/ holds one per type of nodes/registry.ts). `input`: the text
 * it works on, logged as its input (without one, its upstream texts joined by a blank line in edge
 * order). `work`: what it does with it. `resume`: what a node an earlier attempt finished leaves in
 * the run's state when it is taken up again without running (its output is `out`).
 * `failureIsFinal`: a failed step of this node is finished as its log holds it, so a takeover does
 * not run it again (it goes on past its failure with nothing to pass on).
 */
export interface NodeStep<N extends WorkflowNode = WorkflowNode> {
  input?(run: RunState, node: N, before: Produced[]): Promise<string> | string;
  work(run: RunState, node: N, input: string, before: Produced[]): Promise<StepDone>;
  resume?(run: RunState, node: N, out: Produced, before: Produced[]): Promise<void> | void;
  failureIsFinal?(node: N): boolean;
}

/** The node of a type. */
export type NodeOf<T extends WorkflowNode['type']> = Extract<WorkflowNode, { type: T }>;
