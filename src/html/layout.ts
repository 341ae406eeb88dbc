import { html, type Html } from './html.ts';

export interface LayoutModel {
  title: string;
  /** The logged-in user's login, shown in the header with a logout form. */
  user?: { login: string; csrf: string } | undefined;
  /** The console page this is (a path of the navigation), marked `aria-current="page"` there. */
  current?: string;
  /** A success message after an action ("Application deleted."). */
  flash?: string | undefined;
  /**
   * The page's main action (an element id and what it is): the first Tab stop is a link to it, so
   * keyboard order starts at the main action rather than at the navigation.
   */
  mainAction?: { id: string; label: string } | undefined;
}

const SETTINGS_NAV = [
  ['/workflows', 'Workflows'],
  ['/settings/applications', 'Applications'],
  ['/settings/tokens', 'Access tokens'],
  ['/settings/organizations', 'Organizations'],
  ['/settings/authorizations', 'Authorized apps'],
  ['/settings/password', 'Password'],
  ['/docs', 'API reference'],
] as const;

/** The page around every view: title, stylesheet, and the console navigation (workflows, settings) for a logged-in user. */
export function layout(model: LayoutModel, body: Html): Html {
  const nav = model.user
    ? html`<nav aria-label="Console">${SETTINGS_NAV.map(([path, label]) => html`<a href="${path}"${path === model.current ? html` aria-current="page"` : ''}>${label}</a> `)}
<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf_token" value="${model.user.csrf}">
<span>${model.user.login}</span> <button type="submit" class="link">Log out</button></form></nav>`
    : html``;
  // One approach on every console page: the first Tab stop is a "Skip to ..." link to the page's
  // main action, or, on a page without one, to the main content.
  const skip = model.mainAction ?? (model.user ? { id: 'main', label: 'main content' } : undefined);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${model.title}</title><link rel="icon" href="/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/assets/app.css"><script src="/assets/console.js" defer></script></head>
<body>${skip ? html`<a class="skip-link" href="#${skip.id}">Skip to ${skip.label}</a>` : ''}<header><strong>OpenAuth</strong>${nav}</header><main id="main" tabindex="-1">${model.flash ? html`<p class="success" role="status">${model.flash}</p>` : ''}${body}</main></body></html>`;
}
