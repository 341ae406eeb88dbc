// What an attempt records of each node as the execution reports it: the node's entry in the run's
// log (stepLog.ts) and its events on the run's stream (eventLog.ts), and the tokens the run used.
import type { StepReport, WorkflowNode } from './executor.ts';
import type { EventLog } from './eventLog.ts';
import { logText, type StepLog } from './stepLog.ts';
import type { RunFailure } from '../shared/errors.ts';
import type { NewStepRow, RunSpent } from './store.ts';
import { addedUsage } from './providers/index.ts';
import { addCost, costToWire, type CostNanos } from '../shared/prices.ts';
import { costColumns } from './runShapes.ts';

export class StepRecord {
  /** The nodes logged so far, and whether each one's input was cut for the log. */
  readonly inputCut = new Map<string, boolean>();
  /** The run's token usage: its steps' so far, the earlier attempts' kept steps included. */
  usage: NonNullable<StepReport['usage']> = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  /** The run's cost: its steps' that have one, summed (null: none has). */
  cost: CostNanos | null = null;
  private readonly runId: string;
  private readonly steps: StepLog;
  private readonly events: EventLog;
  private readonly now: () => number;

  constructor(runId: string, steps: StepLog, events: EventLog, now: () => number) {
    this.runId = runId;
    this.steps = steps;
    this.events = events;
    this.now = now;
  }

  /** What the run spent so far, as its end (or a cancel's keepSpent) writes it. */
  spent(): RunSpent {
    return { usage: JSON.stringify(this.usage), ...costColumns(this.cost) };
  }

  addUsage(usage: StepReport['usage'], cost: CostNanos | null = null): void {
    if (usage) this.usage = addedUsage(this.usage, usage);
    this.cost = addCost(this.cost, cost);
  }

  /** A node's start: its log entry, running, and its node.started event. */
  started(node: WorkflowNode, input: string): void {
    const logged = logText(input);
    this.inputCut.set(node.id, logged.cut);
    const startedAt = this.now();
    this.events.add('node.started', {
      node_id: node.id,
      node_type: node.type,
      started_at: new Date(startedAt).toISOString(),
    });
    this.steps.start({
      ...this.row(node, 'running'),
      started_at: startedAt,
      input_preview: logged.text,
      truncated: logged.cut,
    });
  }

  /** A node's end: its log entry's end, and its node.finished event. */
  ended(report: StepReport): void {
    const logged = logText(report.output);
    this.addUsage(report.usage, report.cost ?? null);
    const finishedAt = this.now();
    this.events.add('node.finished', {
      node_id: report.nodeId,
      node_type: report.nodeType,
      status: report.status,
      finished_at: new Date(finishedAt).toISOString(),
      output: logged.text,
      ...(report.outputIsJson && !logged.cut && report.output !== null
        ? { output_value: JSON.parse(report.output) as unknown }
        : {}),
      usage: report.usage,
      cost: report.cost ? costToWire(report.cost) : null,
      error: stepError(report.error),
      ...(report.case !== undefined ? { case: report.case } : {}),
    });
    this.steps.end(report.nodeId, {
      status: report.status,
      finished_at: finishedAt,
      output_preview: logged.text,
      output_json: report.outputIsJson ?? false,
      truncated: logged.cut || (this.inputCut.get(report.nodeId) ?? false),
      usage: report.usage ? JSON.stringify(report.usage) : null,
      error: report.error ? JSON.stringify(stepError(report.error)) : null,
      attempts: report.attempts,
      ...costColumns(report.cost),
      chosen_case: report.case ?? null,
    });
  }

  /** An approval node waiting for its answer: its entry stays open as `waiting` (its node.waiting event comes with the run's pause). */
  waiting(node: WorkflowNode): void {
    this.steps.end(node.id, {
      status: 'waiting',
      finished_at: null,
      output_preview: null,
      output_json: false,
      truncated: this.inputCut.get(node.id) ?? false,
      usage: null,
      error: null,
      attempts: null,
      chosen_case: null,
    });
  }

  /** A node without a start: skipped (a branch not taken) or, once the run ends, never started. */
  unstarted(node: WorkflowNode, status: 'skipped' | 'not_started'): void {
    this.inputCut.set(node.id, false);
    this.events.add('node.finished', {
      node_id: node.id,
      node_type: node.type,
      status,
      finished_at: null,
      output: null,
      usage: null,
      error: null,
    });
    this.steps.start(this.row(node, status));
  }

  private row(node: WorkflowNode, status: string): NewStepRow {
    const none = {
      started_at: null,
      finished_at: null,
      input_preview: null,
      output_preview: null,
      output_json: false,
      usage: null,
      error: null,
      attempts: null,
    };
    return { run_id: this.runId, node_id: node.id, node_type: node.type, status, ...none, truncated: false };
  }
}

/** A step's error: the run's, with an llm_call's unusable answer (cut as the step's texts are). */
function stepError(error: RunFailure | null) {
  if (!error) return null;
  return {
    ...error.toJSON(),
    ...(error.rawOutput !== undefined ? { raw_output: logText(error.rawOutput).text } : {}),
  };
}
