// The page a reviewer opens from an approval node's single-use link: the node's message and a form
// built from its answer_schema (a choice for a boolean or an enum, a number field, a text box).
import { answerSchemaOf, type AnswerField, type AnswerSchema } from '../../nodes/approval/answers.ts';
import { html, type Html } from '../../html/html.ts';
import { layout } from '../../html/layout.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';

export interface ApprovalModel {
  /** Where the form posts (the link itself). */
  action: string;
  message: string;
  schema: AnswerSchema;
  csrf: string;
  expiresAt: string;
  problems?: FormProblem[];
}

/** One field of the answer, by its type. */
function answerField(name: string, field: AnswerField, required: boolean, problems: FormProblem[]): Html {
  const id = `answer-${name}`;
  const label = html`<label for="${id}">${name}${required ? '' : ' (optional)'}</label>${field.description ? html`<p class="hint">${field.description}</p>` : ''}`;
  const attrs = invalidAttrs(problems, name);
  const choices: [string, string][] | undefined =
    field.type === 'boolean'
      ? [
          ['true', 'Yes'],
          ['false', 'No'],
        ]
      : field.enum?.map((value) => [value, value]);
  const input = choices
    ? html`<select id="${id}" name="${name}"${attrs}>${required ? '' : html`<option value=""></option>`}${choices.map(([value, text]) => html`<option value="${value}">${text}</option>`)}</select>`
    : field.type === 'string'
      ? html`<textarea id="${id}" name="${name}" rows="3"${attrs}></textarea>`
      : html`<input id="${id}" name="${name}" type="number"${field.type === 'number' ? html` step="any"` : ''}${attrs}>`;
  return html`<p>${label}${input}${fieldError(problems, name)}</p>`;
}

export const approvalPage = (m: ApprovalModel): Html => {
  const problems = m.problems ?? [];
  const required = new Set(m.schema.required ?? []);
  return layout(
    { title: 'Approval', mainAction: { id: 'answer', label: 'the answer' } },
    html`<h1>Approval</h1><pre class="approval-message">${m.message}</pre>${formProblems(problems)}
<form method="post" action="${m.action}" id="answer"><input type="hidden" name="csrf_token" value="${m.csrf}">
${Object.entries(m.schema.properties).map(([name, field]) => answerField(name, field, required.has(name), problems))}
<p class="hint">This link works once, until ${m.expiresAt}.</p><button type="submit">Send answer</button></form>`,
  );
};

/** What the run page knows of a waiting run: its steps (the waiting ones) and its graph (their answer schemas). */
export interface WaitingRunModel {
  workflowId: string;
  run: { id: string; status: string; logs: { node_id: string; status: string; input: string | null }[] };
  graph: { nodes: { id: string; config: unknown }[] };
  user: { csrf: string };
}

/** On a waiting run's page: each waiting approval's message and its answer form (posting to the console's resume). */
export function waitingForms(m: WaitingRunModel): Html {
  if (m.run.status !== 'waiting') return html``;
  return html`${m.run.logs
    .filter((step) => step.status === 'waiting')
    .map((step) => {
      const node = m.graph.nodes.find((n) => n.id === step.node_id);
      const schema = answerSchemaOf((node?.config ?? {}) as Record<string, unknown>);
      const required = new Set(schema.required ?? []);
      return html`<section class="approval" aria-labelledby="approval-${step.node_id}"><h2 id="approval-${step.node_id}">Waiting for an answer: ${step.node_id}</h2><pre class="approval-message">${step.input ?? ''}</pre>
<form method="post" action="/workflows/${m.workflowId}/runs/${m.run.id}/resume" data-approval-form><input type="hidden" name="csrf_token" value="${m.user.csrf}"><input type="hidden" name="node_id" value="${step.node_id}">
${Object.entries(schema.properties).map(([name, field]) => answerField(name, field, required.has(name), []))}
<button type="submit" class="primary">Send answer</button></form></section>`;
    })}`;
}
