// What an approval node throws when its answer has not come: not a failure, a pause. The executor
// lets the other branches finish and ends the execution with it; the runner then stores the run
// as `waiting` (attempt.ts pause) and the job ends, so no worker holds a run that waits for a person.
import type { AnswerSchema } from '../nodes/approval/answers.ts';

export class AwaitingAnswer extends Error {
  readonly nodeId: string;
  /** The message shown to the reviewer, rendered. */
  readonly prompt: string;
  readonly answerSchema: AnswerSchema;
  /** How long the node waits, capped by APPROVAL_MAX_WAIT_SECONDS when stored; undefined: that cap. */
  readonly timeoutSeconds: number | undefined;
  constructor(nodeId: string, prompt: string, answerSchema: AnswerSchema, timeoutSeconds: number | undefined) {
    super(`The node "${nodeId}" waits for an answer.`);
    this.nodeId = nodeId;
    this.prompt = prompt;
    this.answerSchema = answerSchema;
    this.timeoutSeconds = timeoutSeconds;
  }
}

/** What an approval node learns of its answer from the store: given, timed out, or not yet (undefined). */
export type ApprovalState = { answer: Record<string, unknown> } | { timedOut: true; waitedSeconds: number };

/** Looks up an approval node's answer in this run (runner.ts gives it; inside a map or a called workflow there is none). */
export type ApprovalLookup = (nodeId: string) => Promise<ApprovalState | undefined>;
