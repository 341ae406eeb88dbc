/**
 * A compute function's own failure (as opposed to a budget it broke): `code` is the run error code
 * the node fails with. It crosses the process boundary as code and message.
 */
export class FunctionError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
    this.name = 'FunctionError';
  }
}
