// Authorization codes through the real authorize endpoint and their exchange, for the OAuth rows.
import { type Browser, formFields, PKCE } from '../test/support/oauthFlow.ts';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/**
 * One code, the way a browser gets it: the consent page, then the Allow answer; the code is in the
 * Location. `prompt=consent`: the grant is remembered after the first Allow, and the bench keeps
 * minting through the page as before.
 */
async function mintCode(browser: Browser, clientId: string, scope: string): Promise<string> {
  const url = new URL('/oauth/authorize', browser.baseUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    state: 'bench',
    prompt: 'consent',
    code_challenge: PKCE.challenge,
    code_challenge_method: 'S256',
  }).toString();
  const consent = await browser.fetch(url.toString());
  if (consent.status !== 200) throw new Error(`expected the consent page, got ${consent.status}`);
  const answer = await browser.post('/oauth/authorize/decision', {
    ...formFields(await consent.text()),
    decision: 'allow',
  });
  const code = new URL(answer.headers.get('location') ?? 'x:').searchParams.get('code');
  if (answer.status !== 303 || !code) throw new Error(`expected a redirect with a code, got ${answer.status}`);
  return code;
}

export async function mintCodes(browser: Browser, clientId: string, scope: string, count: number): Promise<string[]> {
  const codes: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        next += 1;
        codes.push(await mintCode(browser, clientId, scope));
      }
    }),
  );
  return codes;
}

export async function exchange(
  baseUrl: string,
  auth: string,
  code: string,
  extraHeaders: Record<string, string> = {},
): Promise<{ access_token: string; refresh_token: string; token_type: string }> {
  const res = await fetch(`${baseUrl}/api/open/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth, ...extraHeaders },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: PKCE.verifier,
    }).toString(),
  });
  const body = (await res.json()) as { access_token: string; refresh_token: string; token_type: string };
  if (!res.ok) throw new Error(`code exchange failed: ${JSON.stringify(body)}`);
  return body;
}
