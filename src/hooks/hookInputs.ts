// How a trigger URL's body becomes a run's inputs (openapi.yaml runHook). Webhook senders send
// their own shapes (a GitHub event, a Stripe event, a form), never a body shaped as our inputs,
// so the whole body is the one input of a one-input workflow; a body that is exactly the inputs
// keeps its old reading, so every body accepted before starts the same run.
import { runInputOf } from '../nodes/registry.ts';
import { checkInputs, inputsFromText, type RunInputs } from '../runs/service.ts';
import type { HookBody } from './hookBody.ts';

type Nodes = Parameters<typeof checkInputs>[0];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A body's fields as inputs: a form's are text, read as the console's form is (typed per input). */
function fieldsOf(nodes: Nodes, body: HookBody): Record<string, unknown> | undefined {
  if (!isRecord(body.value)) return undefined;
  return body.kind === 'form' ? inputsFromText(nodes, body.value as Record<string, string>) : body.value;
}

/** The whole body as one input of `type`: its text for a string, else its parsed value. */
function wholeBody(type: string | undefined, body: HookBody): unknown {
  if ((type ?? 'string') === 'string') return body.text;
  if (body.kind !== 'text') return body.value;
  try {
    return JSON.parse(body.text) as unknown;
  } catch {
    return body.text; // the type check names the input
  }
}

/** The run inputs a body gives; startRun checks them against the graph and names what does not fit. */
export function hookInputs(nodes: Nodes, body: HookBody): RunInputs {
  const fields = fieldsOf(nodes, body);
  if (fields && checkInputs(nodes, fields).length === 0) return fields;
  const inputs = nodes.flatMap((n) => runInputOf(n) ?? []);
  if (inputs.length === 1) return { [inputs[0]!.variable]: wholeBody(inputs[0]!.type, body) };
  const named = new Set(inputs.map((i) => i.variable));
  return Object.fromEntries(Object.entries(fields ?? {}).filter(([name]) => named.has(name)));
}
