// The pure functions a compute process runs (pool.ts): each takes a JSON-like input and returns a
// JSON-like value, reads nothing outside its input and keeps nothing between calls. A node kind
// that computes (templates now; expressions, code or map nodes later) adds its function here and
// calls it by name through the pool, so it runs under the same budgets (heap, CPU time, output
// size) in a child process whose death never takes the service down.
import { renderTemplate, TemplateError, type TemplateScope } from '../../workflows/templates.ts';
import { FunctionError } from './functionError.ts';
import { jsonValue, type JsonValueInput } from './jsonValue.ts';
import { switchCase, type SwitchInput } from './switchCase.ts';
import { SplitError, splitText, type SplitInput } from './split.ts';

export { FunctionError };

export interface RenderInput {
  source: string;
  scope: TemplateScope;
}

export const COMPUTE_FUNCTIONS = {
  /** A Liquid template rendered over its scope (workflows/templates.ts). */
  async renderTemplate({ source, scope }: RenderInput): Promise<string> {
    try {
      return await renderTemplate(source, scope);
    } catch (err) {
      if (err instanceof TemplateError) throw new FunctionError('template_error', err.message);
      throw err;
    }
  },
  /** A switch node's chosen case (switchCase.ts). */
  async switchCase(input: SwitchInput): Promise<{ chosen: string; compared: unknown }> {
    try {
      return await switchCase(input);
    } catch (err) {
      if (err instanceof TemplateError) throw new FunctionError('template_error', err.message);
      throw err;
    }
  },
  /** A JSON text parsed, or a value, checked against a JSON Schema (jsonValue.ts). */
  jsonValue(input: JsonValueInput): unknown {
    return jsonValue(input);
  },
  /** A text made into a list: by separator, by characters or by approximate tokens (split.ts). */
  splitText(input: SplitInput): string[] {
    try {
      return splitText(input);
    } catch (err) {
      if (err instanceof SplitError) throw new FunctionError(err.code, err.message);
      throw err;
    }
  },
} satisfies Record<string, (input: never) => Promise<unknown> | unknown>;

export type ComputeFunctions = typeof COMPUTE_FUNCTIONS;
export type ComputeFunctionName = keyof ComputeFunctions;
