// Domain errors thrown by services. The HTTP layer (src/http/errorHandler.ts) renders any error
// with a 4xx `status` as problem+json using `message` as the detail; the admin CLI prints it.

export type AppErrorCode = 'bad_request' | 'forbidden' | 'not_found' | 'conflict' | 'unprocessable';

export interface AppErrorItem {
  /** JSON pointer or field name the problem is about. */
  pointer: string;
  message: string;
}

const statusOf: Record<AppErrorCode, number> = {
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
};

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly status: number;
  readonly errors: AppErrorItem[] | undefined;

  constructor(code: AppErrorCode, message: string, errors?: AppErrorItem[]) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = statusOf[code];
    this.errors = errors;
  }
}

export const badRequest = (message: string, errors?: AppErrorItem[]) => new AppError('bad_request', message, errors);
export const forbidden = (message: string) => new AppError('forbidden', message);
export const notFound = (message: string) => new AppError('not_found', message);
export const conflict = (message: string) => new AppError('conflict', message);
export const unprocessable = (message: string, errors?: AppErrorItem[]) => new AppError('unprocessable', message, errors);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
