import { html, type Html } from '../../html/html.ts';
import { layout } from '../../html/layout.ts';
import { consentDetails } from '../../oauth/consent.ts';
import type { DeviceRequest } from '../../oauth/device.ts';
import { splitScope } from '../../oauth/scopes.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';

// The device flow's verification page (RFC 8628 3.3): the user enters the code their device
// shows, then sees the code flow's consent and approves or denies.

/** Enter the code; `prefilled`: from verification_uri_complete, still to be confirmed by the user (5.4). */
export const deviceCodePage = (m: { user: PageUser; prefilled: string; problems: FormProblem[] }): Html =>
  layout(
    { title: 'Connect a device', user: m.user, mainAction: { id: 'user_code', label: 'Enter the code' } },
    html`<h1>Connect a device</h1>
<p>Enter the code shown on your device or in your terminal. Only enter a code you got from a device you are setting up yourself.</p>${formProblems(m.problems)}
<form method="post" action="/device"><input type="hidden" name="csrf_token" value="${m.user.csrf}">
<label for="user_code">Code <small>(8 letters, like WDJB-MJHT)</small></label><input type="text" id="user_code" name="user_code" value="${m.prefilled}" maxlength="32" autocomplete="off" autocapitalize="characters" spellcheck="false" required${invalidAttrs(m.problems, 'user_code')}>${fieldError(m.problems, 'user_code')}
<button type="submit" id="continue" class="primary">Continue</button></form>`,
  );

/** The consent, as in the code flow, with the code to compare against the device's (RFC 8628 5.4). */
export const deviceConsentPage = (m: { user: PageUser; request: DeviceRequest }): Html => {
  const { request } = m;
  const shown = `${request.userCode.slice(0, 4)}-${request.userCode.slice(4)}`;
  return layout(
    { title: `Authorize ${request.client.name}`, user: m.user, mainAction: { id: 'allow', label: 'Allow or Deny' } },
    html`${consentDetails(request.client, splitScope(request.scope), m.user, request.ownerLogin)}
<p>Check that your device shows the code <strong class="user-code">${shown}</strong>. If it does not, or you did not start this, deny.</p>
<form method="post" action="/device/decision"><input type="hidden" name="csrf_token" value="${m.user.csrf}"><input type="hidden" name="user_code" value="${request.userCode}">
<button type="submit" name="decision" value="allow" id="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>`,
  );
};

/** After the decision: back to the device. */
export const deviceDonePage = (m: { user: PageUser; approved: boolean; appName: string }): Html =>
  layout(
    { title: m.approved ? 'Device connected' : 'Request denied', user: m.user },
    m.approved
      ? html`<h1>Device connected</h1><p role="status"><strong>${m.appName}</strong> can now access your account from your device. You can close this page and return to your device.</p>`
      : html`<h1>Request denied</h1><p role="status"><strong>${m.appName}</strong> gets no access. You can close this page.</p>`,
  );
