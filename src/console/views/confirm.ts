import { html, type Html } from '../../html/html.ts';
import type { PageUser } from './format.ts';
import { layout } from '../../html/layout.ts';

export interface ConfirmModel {
  user: PageUser;
  /** The settings page this step belongs to (the nav marks it). */
  current: string;
  /** The question, as the page's title: "Delete Notes?". */
  title: string;
  /** What happens, said plainly: who loses what. */
  consequence: string;
  /** Where the confirming form posts (CSRF-protected like every form). */
  action: string;
  /** The destructive button's words: "Delete this application". */
  button: string;
  cancel: string;
  /** Fields the confirming form posts besides the CSRF token (what exactly the user confirmed). */
  hidden?: Record<string, string> | undefined;
  /** Why the last confirmation did nothing (what changed meanwhile), shown above the question. */
  problem?: string | undefined;
}

/** The step before a destructive action: says what will happen; only its red button does it. */
export const confirmPage = (m: ConfirmModel): Html =>
  layout(
    { title: m.title, user: m.user, current: m.current, mainAction: { id: 'confirm', label: m.button } },
    html`<h1>${m.title}</h1>${m.problem ? html`<p class="error" role="alert">${m.problem}</p>` : ''}<p class="notice">${m.consequence}</p>
<form method="post" action="${m.action}"><input type="hidden" name="csrf_token" value="${m.user.csrf}">${Object.entries(m.hidden ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" class="danger confirm" id="confirm">${m.button}</button> <a href="${m.cancel}">Cancel</a></form>`,
  );
