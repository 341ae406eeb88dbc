import { html, type Html } from '../../html/html.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';
import { layout } from '../../html/layout.ts';
import { MIN_PASSWORD_CHARACTERS } from '../../accounts/passwordPolicy.ts';

export const PASSWORD_NAV = '/settings/password';

/** Change your password: the current one proves it is you; every other browser session then ends. */
export const passwordPage = (m: { user: PageUser; problems: FormProblem[]; flash?: string | undefined }): Html =>
  layout(
    {
      title: 'Password',
      user: m.user,
      current: PASSWORD_NAV,
      flash: m.flash,
      mainAction: { id: 'current_password', label: 'Change your password' },
    },
    html`<h1>Password</h1><p>Changing it signs you out everywhere else: every other browser session of yours ends.</p>${formProblems(m.problems)}
<form method="post" action="/settings/password"><input type="hidden" name="csrf_token" value="${m.user.csrf}">
<input type="text" name="username" value="${m.user.login}" autocomplete="username" hidden>
<label for="current_password">Current password</label><input type="password" id="current_password" name="current_password" autocomplete="current-password" required${invalidAttrs(m.problems, 'current_password')}>${fieldError(m.problems, 'current_password')}
<label for="new_password">New password <small>(at least ${MIN_PASSWORD_CHARACTERS} characters; a few words make a good one)</small></label><input type="password" id="new_password" name="new_password" autocomplete="new-password" required minlength="${MIN_PASSWORD_CHARACTERS}"${invalidAttrs(m.problems, 'new_password')}>${fieldError(m.problems, 'new_password')}
<button type="submit" class="primary">Change password</button></form>`,
  );
