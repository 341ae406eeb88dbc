// The page a reviewer opens from an approval node's single-use link: the node's message and a form
// built from its answer_schema (a choice for a boolean or an enum, a number field, a text box).
import type { AnswerField, AnswerSchema } from '../../nodes/approval/answers.ts';
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
