import { html, type Html } from '../../html/html.ts';
import { layout } from '../../html/layout.ts';

export interface LoginModel {
  csrf: string;
  returnTo: string;
  error?: string;
  login?: string;
  /** The application an authorization request came from: the user signs in to continue to it. */
  appName?: string | undefined;
  /** Self-service sign-up is on: link to it. */
  signup?: boolean;
  /** In development with demo data: say where its login was printed. */
  demoHint?: boolean;
}

export const loginPage = (m: LoginModel): Html =>
  layout(
    { title: 'Log in' },
    html`<h1>Log in</h1>${m.appName ? html`<p class="continue-to">to continue to <strong>${m.appName}</strong></p>` : ''}${m.error ? html`<p class="error" role="alert">${m.error}</p>` : ''}
<form method="post" action="/login">
<input type="hidden" name="csrf_token" value="${m.csrf}"><input type="hidden" name="return_to" value="${m.returnTo}">
<label for="login">Login</label><input type="text" id="login" name="login" value="${m.login ?? ''}" autocomplete="username" required>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit" class="primary">Log in</button></form>
${m.signup ? html`<p>No account? <a href="/signup">Create one</a>.</p>` : ''}${
      m.demoHint
        ? html`<p class="notice">Development: the demo account's login and password (<code>demo</code> / <code>horse-battery-staple</code>) were printed by <code>npm start</code> in its terminal on the first start, with the demo app's client secret and API key.</p>`
        : ''
    }`,
  );
