import { html, type Html } from '../html.ts';

export interface LayoutModel {
  title: string;
  /** The logged-in user's login, shown in the header with a logout form. */
  user?: { login: string; csrf: string } | undefined;
}

/** The page around every view: title, stylesheet, and the settings navigation for a logged-in user. */
export function layout(model: LayoutModel, body: Html): Html {
  const nav = model.user
    ? html`<nav><a href="/settings/applications">Applications</a> <a href="/settings/tokens">Access tokens</a> <a href="/settings/authorizations">Authorized apps</a>
<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf_token" value="${model.user.csrf}">
<span>${model.user.login}</span> <button type="submit">Log out</button></form></nav>`
    : html``;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${model.title}</title><link rel="stylesheet" href="/assets/app.css"></head>
<body><header><strong>OpenAuth</strong>${nav}</header><main>${body}</main></body></html>`;
}
