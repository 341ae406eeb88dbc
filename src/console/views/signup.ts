import { html, type Html } from '../../html/html.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { layout } from '../../html/layout.ts';
import { MIN_PASSWORD_CHARACTERS } from '../../accounts/passwordPolicy.ts';

export interface SignupModel {
  csrf: string;
  login?: string;
  name?: string;
  problems: FormProblem[];
}

/** Self-service sign-up (SIGNUP): a login (also the user's namespace), an optional name, a password. */
export const signupPage = (m: SignupModel): Html =>
  layout(
    { title: 'Create an account' },
    html`<h1>Create an account</h1>${formProblems(m.problems)}
<form method="post" action="/signup"><input type="hidden" name="csrf_token" value="${m.csrf}">
<label for="login">Login</label><p class="hint" id="login-help">Letters, digits and hyphens; also your namespace (where your access tokens act).</p>
<input type="text" id="login" name="login" value="${m.login ?? ''}" autocomplete="username" required aria-describedby="login-help${m.problems.some((p) => p.field === 'login') ? ' login-error' : ''}"${m.problems.some((p) => p.field === 'login') ? html` aria-invalid="true"` : ''}>${fieldError(m.problems, 'login')}
<label for="name">Name <small>(optional)</small></label><input type="text" id="name" name="name" value="${m.name ?? ''}" autocomplete="name"${invalidAttrs(m.problems, 'name')}>${fieldError(m.problems, 'name')}
<label for="password">Password <small>(at least ${MIN_PASSWORD_CHARACTERS} characters; a few words make a good one)</small></label><input type="password" id="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_CHARACTERS}"${invalidAttrs(m.problems, 'password')}>${fieldError(m.problems, 'password')}
<button type="submit" class="primary">Create account</button></form>
<p>Have an account? <a href="/login">Log in</a>.</p>`,
  );
