// How a trigger URL's body becomes a run's inputs (openapi.yaml runHook). Webhook senders send
// their own shapes (a GitHub event, a Stripe event, a form), never a body shaped as our inputs,
// so the whole body is the one input of a one-input workflow; a body that is exactly the inputs
// keeps its old reading, so every body accepted before starts the same run.
import { runInputOf } from '../nodes/registry.ts';
import { checkInputs, inputsFromText, type RunInputs } from '../runs/service.ts';
import { invalidRunInputs } from '../shared/errors.ts';
import { analyseTemplate, type TemplateScope } from '../workflows/templates.ts';
import { FunctionError } from '../runs/compute/functionError.ts';
import { ComputeLimitError } from '../runs/compute/pool.ts';
import type { RunBudget } from '../runs/compute/budget.ts';
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

/**
 * The run inputs a trigger's own templates give (openapi.yaml TriggerInputs): each rendered over
 * the body, headers and query on the compute pool, under the owner's share and a run's compute
 * budget as the workflow's own templates are (an owner's template over a sender's body never
 * holds the event loop), then typed as the console's form is (JSON text parsed for an input that
 * is not a string). A template that fails or breaks a limit is a 400 naming its input; startRun
 * checks the types.
 */
export async function mappedInputs(
  nodes: Nodes,
  templates: Record<string, string>,
  body: HookBody,
  budget: Pick<RunBudget, 'compute'>,
): Promise<RunInputs> {
  // The engine reads any JSON-like scope; a trigger's has no `inputs` or `nodes`, only what came.
  const scope = { body: body.value, headers: body.headers, query: body.query } as unknown as TemplateScope;
  const texts: Record<string, string> = {};
  for (const [name, source] of Object.entries(templates)) {
    try {
      texts[name] = await budget.compute('renderTemplate', { source, scope });
    } catch (err) {
      if (!(err instanceof FunctionError || err instanceof ComputeLimitError)) throw err;
      throw invalidRunInputs([{ pointer: `/body/inputs/${name}`, message: err.message }]);
    }
  }
  return inputsFromText(nodes, texts);
}

/** What is wrong with a trigger's templates for this graph: a name that is no input, a template that does not parse. */
export function templateProblems(
  nodes: Nodes,
  templates: Record<string, string>,
): { pointer: string; message: string }[] {
  const names = new Set(nodes.flatMap((n) => runInputOf(n)?.variable ?? []));
  return Object.entries(templates).flatMap(([name, source]) => {
    const pointer = `/body/inputs/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!names.has(name)) return [{ pointer, message: 'is not a text_input variable of this workflow' }];
    const check = analyseTemplate(source);
    return check.ok ? [] : [{ pointer, message: check.message }];
  });
}
