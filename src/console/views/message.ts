import { html, type Html } from '../../html/html.ts';
import { layout } from '../../html/layout.ts';

export interface MessageModel {
  title: string;
  message: string;
  /** Shown as an error (the form expired, too many attempts) rather than plain text. */
  error?: boolean;
  user?: { login: string; csrf: string };
}

/** A page that only says one thing: "Form expired", "Too many requests", "Not found". */
export const messagePage = (m: MessageModel): Html =>
  layout(
    { title: m.title, user: m.user },
    html`<h1>${m.title}</h1>${m.error ? html`<p class="error">${m.message}</p>` : html`<p>${m.message}</p>`}`,
  );
