import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { dpopKey, dpopProof, type DpopKey } from '../../test/support/dpopProof.ts';
import { createSealer } from '../shared/sealing.ts';
import { DpopVerifier, MAX_PROOF_LENGTH, type DpopDeps } from './dpop.ts';
import { sweepUsedProofs } from './dpopProofs.store.ts';

const BASE = 'https://api.example.com';
const PATH = '/api/open/v1/userinfo';

/** The parts of a request the verifier reads. */
function request(proofs: string[], method = 'GET', url = PATH): Request {
  return { method, originalUrl: url, headersDistinct: proofs.length ? { dpop: proofs } : {} } as unknown as Request;
}

describe.each(testDialects())('DPoP proofs on %s', (dialect) => {
  let t: TestDb;
  let deps: DpopDeps;
  let verifier: DpopVerifier;
  let key: DpopKey;
  beforeAll(async () => {
    t = await createTestDb(dialect);
    deps = { db: t.db, sealer: createSealer(randomBytes(32)), baseUrl: BASE, requireNonce: false, now: Date.now };
    verifier = new DpopVerifier(deps);
    key = await dpopKey();
  });
  afterAll(async () => {
    await t?.destroy();
  });

  const refusal = async (req: Request, accessToken?: string, v = verifier) => {
    const err = await v.verify(req, accessToken).then(
      () => null,
      (e: unknown) => e as { error: string; message: string },
    );
    return err && { error: err.error, message: err.message };
  };

  it('accepts a good proof once, with its key thumbprint; its replay is refused, also by another verifier (process) on the store', async () => {
    const proof = await dpopProof(key, { htu: `${BASE}${PATH}`, accessToken: 'gho_x' });
    const accepted = await verifier.verify(request([proof], 'GET', `${PATH}?a=1`), 'gho_x');
    expect(accepted?.jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await refusal(request([proof]), 'gho_x')).toMatchObject({
      error: 'invalid_dpop_proof',
      message: /used before/,
    });
    const other = new DpopVerifier({ ...deps });
    expect(await refusal(request([proof]), 'gho_x', other)).toMatchObject({ message: /used before/ });
  });

  it('of concurrent presentations of one proof, among other proofs, exactly one is accepted', async () => {
    const htu = `${BASE}${PATH}`;
    const proof = await dpopProof(key, { htu });
    const others = await Promise.all(Array.from({ length: 6 }, () => dpopProof(key, { htu })));
    const answers = await Promise.all(
      [proof, ...others, proof, proof].map((p) =>
        verifier.verify(request([p])).then(
          () => true,
          () => false,
        ),
      ),
    );
    expect(answers.filter((a, i) => a && [0, 7, 8].includes(i))).toHaveLength(1);
    expect(answers.slice(1, 7)).toEqual([true, true, true, true, true, true]);
  });

  it('answers null without a DPoP header', async () => {
    expect(await verifier.verify(request([]))).toBeNull();
  });

  it('refuses a wrong method, URL, stale or future iat, wrong or missing ath', async () => {
    const htu = `${BASE}${PATH}`;
    const cases: Array<[string, RegExp, string | undefined]> = [
      [await dpopProof(key, { htu, htm: 'POST' }), /htm/, undefined],
      [await dpopProof(key, { htu: `${BASE}/api/open/v1/orgs` }), /htu/, undefined],
      [await dpopProof(key, { htu: `https://evil.example.com${PATH}` }), /htu/, undefined],
      [await dpopProof(key, { htu, iat: Math.floor(Date.now() / 1000) - 120 }), /iat/, undefined],
      [await dpopProof(key, { htu, iat: Math.floor(Date.now() / 1000) + 120 }), /iat/, undefined],
      [await dpopProof(key, { htu, accessToken: 'gho_other' }), /ath/, 'gho_x'],
      [await dpopProof(key, { htu }), /ath/, 'gho_x'],
      [await dpopProof(key, { htu, claims: { jti: '' } }), /jti/, undefined],
    ];
    for (const [proof, message, token] of cases)
      expect(await refusal(request([proof]), token)).toMatchObject({ error: 'invalid_dpop_proof', message });
  });

  it('refuses a proof signed by another key than its jwk, alg none or HS256, a private jwk, a bad typ', async () => {
    const htu = `${BASE}${PATH}`;
    const other = await dpopKey();
    const forged = await dpopProof(other, { htu, header: { jwk: key.publicJwk } });
    expect(await refusal(request([forged]))).toMatchObject({ message: /signature/ });
    const hs = await new SignJWT({ htm: 'GET', htu, jti: 'a' })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'HS256', jwk: { kty: 'oct', k: 'AAAA' } as never })
      .setIssuedAt()
      .sign(randomBytes(32));
    expect(await refusal(request([hs]))).toMatchObject({ message: /signed with one of/ });
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ typ: 'dpop+jwt', alg: 'none', jwk: key.publicJwk })}.${b64({ htm: 'GET', htu, jti: 'b', iat: Math.floor(Date.now() / 1000) })}.AA`;
    expect(await refusal(request([none]))).toMatchObject({ message: /signed with one of/ });
    const pair = await generateKeyPair('ES256', { extractable: true });
    const withPrivate = await dpopProof(
      { privateKey: pair.privateKey, publicJwk: await exportJWK(pair.privateKey), alg: 'ES256' },
      { htu },
    );
    expect(await refusal(request([withPrivate]))).toMatchObject({ message: /public key/ });
    expect(await refusal(request([await dpopProof(key, { htu, header: { typ: 'JWT' } })]))).toMatchObject({
      message: /typ/,
    });
  });

  it('refuses two DPoP headers, an oversized one, and one that is no JWT', async () => {
    const htu = `${BASE}${PATH}`;
    const proof = await dpopProof(key, { htu });
    expect(await refusal(request([proof, proof]))).toMatchObject({ message: /one DPoP header/ });
    expect(await refusal(request(['a'.repeat(MAX_PROOF_LENGTH + 1)]))).toMatchObject({ message: /longer than/ });
    expect(await refusal(request(['not a jwt']))).toMatchObject({ message: /not a JWT/ });
    expect(await refusal(request(['e30.e30.e30']))).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  it('nonces: required ones are asked for, fresh ones from any process accepted, stale or forged refused', async () => {
    const strict = new DpopVerifier({ ...deps, requireNonce: true });
    const htu = `${BASE}${PATH}`;
    expect(await refusal(request([await dpopProof(key, { htu })]), undefined, strict)).toMatchObject({
      error: 'use_dpop_nonce',
    });
    const nonce = new DpopVerifier({ ...deps }).nonce();
    expect(await strict.verify(request([await dpopProof(key, { htu, nonce })]))).not.toBeNull();
    const old = new DpopVerifier({ ...deps, now: () => Date.now() - 11 * 60_000 }).nonce();
    expect(await refusal(request([await dpopProof(key, { htu, nonce: old })]), undefined, strict)).toMatchObject({
      error: 'use_dpop_nonce',
    });
    const foreign = new DpopVerifier({ ...deps, sealer: createSealer(randomBytes(32)) }).nonce();
    expect(await refusal(request([await dpopProof(key, { htu, nonce: foreign })]), undefined, verifier)).toMatchObject({
      error: 'use_dpop_nonce',
    });
  });

  it('sweeps used proofs past their expiry', async () => {
    await sweepUsedProofs(t.db, Date.now() + 10 * 60_000);
    expect(Number((await t.db('dpop_proofs').count({ n: '*' }))[0]!.n)).toBe(0);
  });
});
