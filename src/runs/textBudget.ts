import { RunFailure } from '../shared/errors.ts';
import type { RunBudget } from './compute/budget.ts';

/**
 * The size caps of a run's texts: each node's (NODE_TEXT_MAX_CHARS), all the texts the run keeps
 * (RUN_TEXT_MAX_CHARS: they stay in memory until it ends) and its output as stored
 * (RUN_OUTPUT_MAX_CHARS). Past one, the node fails with `output_too_large`.
 */
export class TextBudget {
  private kept = 0;
  private outputChars = 2; // `{}`
  private readonly budget: RunBudget;
  constructor(budget: RunBudget) {
    this.budget = budget;
  }

  keep(text: string): void {
    const max = this.budget.nodeTextMaxChars;
    if (text.length > max) throw new RunFailure('output_too_large', `The node's text is ${text.length} characters, more than ${max} (NODE_TEXT_MAX_CHARS).`);
    this.kept += text.length;
    if (this.kept > this.budget.runTextMaxChars) {
      throw new RunFailure('output_too_large', `The run's texts passed ${this.budget.runTextMaxChars} characters together (RUN_TEXT_MAX_CHARS).`);
    }
  }

  output(nodeId: string, value: unknown): void {
    this.outputChars += JSON.stringify(nodeId).length + JSON.stringify(value).length + 2; // `"id":value,`
    const max = this.budget.runOutputMaxChars;
    if (this.outputChars > max) throw new RunFailure('output_too_large', `The run's output passed ${max} characters (RUN_OUTPUT_MAX_CHARS).`);
  }
}
