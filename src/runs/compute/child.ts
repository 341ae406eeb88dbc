// A compute process (pool.ts): runs one named function of functions.ts at a time and answers with
// its value or its failure. Its heap is capped by --max-old-space-size; the pool kills it when a
// call runs past its time. A value longer than the task's `maxChars` (a string's length, or
// another value's JSON) is refused here, so it never crosses into the service's process.
import { COMPUTE_FUNCTIONS, FunctionError, type ComputeFunctionName } from './functions.ts';

export interface Task {
  id: number;
  name: ComputeFunctionName;
  input: unknown;
  maxChars: number;
}

export type Answer =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; kind: 'function'; code: string; message: string }
  | { id: number; ok: false; kind: 'too_large'; chars: number }
  | { id: number; ok: false; kind: 'crash'; message: string };

async function answer(task: Task): Promise<Answer> {
  const fn = COMPUTE_FUNCTIONS[task.name] as ((input: unknown) => Promise<unknown>) | undefined;
  if (typeof fn !== 'function')
    return { id: task.id, ok: false, kind: 'crash', message: `no compute function "${String(task.name)}"` };
  try {
    const value = await fn(task.input);
    const chars = typeof value === 'string' ? value.length : (JSON.stringify(value)?.length ?? 0);
    if (chars > task.maxChars) return { id: task.id, ok: false, kind: 'too_large', chars };
    return { id: task.id, ok: true, value };
  } catch (err) {
    if (err instanceof FunctionError)
      return { id: task.id, ok: false, kind: 'function', code: err.code, message: err.message };
    // V8's own refusal of a string past its maximum length is the value being too large too.
    if (err instanceof RangeError && /string length/i.test(err.message))
      return { id: task.id, ok: false, kind: 'too_large', chars: Infinity };
    return { id: task.id, ok: false, kind: 'crash', message: err instanceof Error ? err.message : String(err) };
  }
}

const send = (message: Answer | 'ready') => process.send!(message);
process.on('message', (task: Task) => {
  void answer(task).then(send);
});
// The service went away: so does this process (the IPC channel closing is its only signal).
process.on('disconnect', () => process.exit(0));
send('ready');
