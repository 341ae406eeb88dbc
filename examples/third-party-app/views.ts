// Server-rendered pages: every interpolated value is escaped, no inline script or style (the CSP
// allows neither), one stylesheet at /app.css.
import type { Schemas } from 'openauth-workflows/client';

export interface Html {
  readonly __html: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (typeof value === 'object' && '__html' in value) return (value as Html).__html;
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Tagged template: values are escaped unless they are `Html` (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return { __html: strings.reduce((out, s, i) => out + render(values[i - 1]) + s) };
}

export const STYLESHEET = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#eef2f7}
header{display:flex;align-items:center;justify-content:space-between;padding:.6rem 1.2rem;background:#0b3d63;color:#fff}
header form{margin:0}
main{max-width:46rem;margin:1.5rem auto;padding:1.5rem;background:#fff;border:1px solid #cfd8e3;border-radius:8px}
h2{margin-top:1.6rem;font-size:1.15rem}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e5e9f0}
.button,button{display:inline-block;padding:.45rem 1rem;border-radius:6px;border:1px solid #0b3d63;background:#0b5cab;color:#fff;text-decoration:none;cursor:pointer;font:inherit}
header button{background:transparent}
.user{display:flex;gap:1rem;align-items:center}.user img{width:48px;height:48px;border-radius:50%}
.notice{padding:.6rem .8rem;border-radius:6px;background:#fff4e5;border:1px solid #f0b35b}
.error{padding:.6rem .8rem;border-radius:6px;background:#fdecea;border:1px solid #e5534b}
.answer{padding:.6rem .8rem;border-radius:6px;background:#e8f5e9;border:1px solid #57ab5a;white-space:pre-wrap}
textarea{width:100%;box-sizing:border-box;min-height:4rem;font:inherit}
code{background:#f0f3f6;padding:0 .25rem;border-radius:4px}small{color:#57606a}
`;

export function page(title: string, body: Html, signedIn = false): string {
  const signOut = signedIn
    ? html`<form method="post" action="/logout"><button type="submit" id="sign-out">Sign out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${render(title)}</title><link rel="stylesheet" href="/app.css"></head>
<body>${html`<header><strong>Example third-party app</strong>${signOut}</header><main>${body}</main>`.__html}</body></html>`;
}

export interface ProxyView {
  namespace: string;
  id: number;
  name: string;
  usageScenario: string;
  /** From the JWT's protected header and claims, decoded (the gateway verifies it, not us). */
  alg: string;
  typ: string;
  kid: string;
  expiresAt: number;
}

export interface NamespaceTokens {
  namespace: string;
  kind: 'personal' | 'organization';
  tokens: Schemas['AccessTokenListItem'][];
  error?: string;
}

export type GatewayOutcome =
  | { ok: true; content: string; model: string; usage: Schemas['Usage'] }
  | { ok: false; status: number; code: string | null; message: string };

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';

export function signInButton(): Html {
  return html`<p><a class="button" id="sign-in" href="/login">Sign in with OpenAuth</a></p>`;
}

export function proxySection(proxy: ProxyView, now: number, prompt = ''): Html {
  const minutes = Math.max(0, Math.round((proxy.expiresAt - now) / 60_000));
  return html`<section id="proxy"><h2>Proxy token</h2>
<p>For access token <strong id="proxy-token-name">${proxy.name}</strong> <small>(namespace <code>${proxy.namespace}</code>, id ${proxy.id}, ${proxy.usageScenario})</small>.</p>
<p id="proxy-token-info">A JWT (<code>alg ${proxy.alg}</code>, <code>typ ${proxy.typ}</code>, <code>kid ${proxy.kid}</code>) that expires at <strong>${when(proxy.expiresAt)}</strong> (in about ${minutes} min).
This app never sees the raw access token, and does not display the proxy token either: it is a bearer credential.</p>
<form method="post" action="/ask"><label for="prompt">Ask the gateway (model <code>echo</code>)</label>
<textarea id="prompt" name="prompt" required maxlength="2000">${prompt}</textarea>
<button type="submit" id="ask">Ask the gateway</button></form></section>`;
}

export function outcomeSection(prompt: string, outcome: GatewayOutcome): Html {
  if (outcome.ok) {
    return html`<section><h2>Gateway answer</h2><p><small>You asked:</small> ${prompt}</p>
<div class="answer" id="answer">${outcome.content}</div>
<p><small>model ${outcome.model}; usage ${outcome.usage.prompt_tokens} + ${outcome.usage.completion_tokens} = ${outcome.usage.total_tokens} tokens</small></p></section>`;
  }
  const hint =
    outcome.status === 401
      ? html`<p>The service refused the proxy token: the user revoked this app's authorization, or deleted the access token behind it, or it expired. ${signInButton()}</p>`
      : '';
  return html`<section><h2>Gateway answer</h2><div class="error" id="gateway-error"><strong>The gateway refused the call: HTTP ${outcome.status || 'unreachable'}${outcome.code ? html` <code>${outcome.code}</code>` : ''}</strong><br>${outcome.message}</div>${hint}</section>`;
}

export function signedOutPage(notice: string | undefined, proxy: ProxyView | undefined, now: number): string {
  return page(
    'Example third-party app',
    html`<h1>Example third-party app</h1>
<p>This app signs you in with OpenAuth (authorization code with PKCE), shows your profile, namespaces and access tokens, and calls your serverless API through a short-lived proxy token.</p>
${notice ? html`<p class="notice" id="notice">${notice}</p>` : ''}${signInButton()}
${proxy ? html`<p>The app still holds a proxy token it fetched earlier:</p>${proxySection(proxy, now)}` : ''}`,
  );
}

export function homePage(
  user: Schemas['UserInfo'],
  namespaces: NamespaceTokens[],
  proxy: ProxyView | undefined,
  now: number,
): string {
  const rows = namespaces.map(
    (
      ns,
    ) => html`<tr><th colspan="4"><code>${ns.namespace}</code> <small>${ns.kind}</small>${ns.error ? html` <span class="error">${ns.error}</span>` : ''}</th></tr>
${ns.tokens.length || ns.error ? '' : html`<tr><td colspan="4"><small>No access tokens in this namespace.</small></td></tr>`}
${ns.tokens.map(
  (t) => html`<tr class="token"><td>${t.name}</td><td><small>id ${t.id}</small></td><td>${t.usage_scenario}</td>
<td><form method="post" action="/proxy-token"><input type="hidden" name="namespace" value="${ns.namespace}"><input type="hidden" name="id" value="${t.id}"><button type="submit">Use this token</button></form></td></tr>`,
)}`,
  );
  return page(
    'Example third-party app',
    html`<div class="user"><img src="${user.avatar_url}" alt=""><div><h1 id="user-name">${user.name}</h1><p>Signed in as <strong id="user-login">${user.login}</strong> <small>(user id ${user.id})</small></p></div></div>
<h2>Namespaces</h2><ul id="namespaces">${namespaces.map((ns) => html`<li><code>${ns.namespace}</code> <small>${ns.kind}</small></li>`)}</ul>
<h2>Access tokens</h2><p><small>Names and usage scenarios only; the service never hands raw tokens to apps. Pick one to get a proxy token for the gateway.</small></p>
<table id="tokens">${rows}</table>
${proxy ? proxySection(proxy, now) : ''}`,
    true,
  );
}

export function answerPage(
  signedIn: boolean,
  proxy: ProxyView | undefined,
  prompt: string,
  outcome: GatewayOutcome,
  now: number,
): string {
  return page(
    'Gateway answer',
    html`${outcomeSection(prompt, outcome)}${proxy ? proxySection(proxy, now, prompt) : ''}<p><a href="/">Back to the home page</a></p>`,
    signedIn,
  );
}

export function messagePage(title: string, message: string, signedIn = false): string {
  return page(
    title,
    html`<h1>${title}</h1><p class="error" id="message">${message}</p><p><a href="/">Back to the home page</a></p>`,
    signedIn,
  );
}
