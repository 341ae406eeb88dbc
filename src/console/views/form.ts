import { html, type Html } from '../../html/html.ts';

/** Why a form was refused: a message, about one field when `field` names it (as the input's `name`). */
export interface FormProblem {
  field?: string | undefined;
  message: string;
}

/** The problems about no field in particular, or a pointer to the marked fields, announced to screen readers. */
export function formProblems(problems: FormProblem[]): Html {
  if (!problems.length) return html``;
  const general = problems.filter((p) => !p.field).map((p) => html`<p>${p.message}</p>`);
  const onFields = problems.some((p) => p.field);
  return html`<div class="error" role="alert">${general}${onFields ? html`<p>Check the marked field${problems.filter((p) => p.field).length > 1 ? 's' : ''} below.</p>` : ''}</div>`;
}

/** `aria-invalid` and `aria-describedby` for an input whose field has a problem (nothing otherwise). */
export function invalidAttrs(problems: FormProblem[], field: string): Html {
  return problems.some((p) => p.field === field)
    ? html` aria-invalid="true" aria-describedby="${field}-error"`
    : html``;
}

/** The message under a field that has a problem, naming it for `aria-describedby`. */
export function fieldError(problems: FormProblem[], field: string): Html {
  const messages = problems.filter((p) => p.field === field).map((p) => p.message);
  return messages.length ? html`<p class="field-error" id="${field}-error">${messages.join('; ')}</p>` : html``;
}
