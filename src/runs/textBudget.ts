// The size caps of a run's texts and output (executor.ts): a node past one fails with
// `output_too_large`.
import { RunFailure } from '../shared/errors.ts';
import type { RunBudget } from './compute/budget.ts';

/**
 * The size caps of a run's texts: each node's (NODE_TEXT_MAX_CHARS), all the texts the run keeps
 * (RUN_TEXT_MAX_CHARS: they stay in memory until it ends) and its output as stored
 * (RUN_OUTPUT_MAX_CHARS). Past one, the node fails with `output_too_large`.
 */
export class TextBudget {
  private outputChars = 2; // `{}`
  private readonly budget: RunBudget;
  /** The run's texts kept so far: one count for the run and every graph run inside it. */
  private readonly texts: { kept: number };
  constructor(budget: RunBudget, texts = { kept: 0 }) {
    this.budget = budget;
    this.texts = texts;
  }

  /** The caps of a graph run inside the run (a map's item, a called workflow): its texts count as the run's; its output is its own. */
  forSubgraph(): TextBudget {
    return new TextBudget(this.budget, this.texts);
  }

  keep(text: string): void {
    const max = this.budget.nodeTextMaxChars;
    if (text.length > max)
      throw new RunFailure(
        'output_too_large',
        `The node's text is ${text.length} characters, more than ${max} (NODE_TEXT_MAX_CHARS).`,
      );
    this.texts.kept += text.length;
    if (this.texts.kept > this.budget.runTextMaxChars) {
      throw new RunFailure(
        'output_too_large',
        `The run's texts passed ${this.budget.runTextMaxChars} characters together (RUN_TEXT_MAX_CHARS).`,
      );
    }
  }

  output(nodeId: string, value: unknown): void {
    this.outputChars += JSON.stringify(nodeId).length + JSON.stringify(value).length + 2; // `"id":value,`
    const max = this.budget.runOutputMaxChars;
    if (this.outputChars > max)
      throw new RunFailure('output_too_large', `The run's output passed ${max} characters (RUN_OUTPUT_MAX_CHARS).`);
  }
}
