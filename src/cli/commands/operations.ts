// The admin CLI's operator commands: the demo data, signing keys, sealed secrets, migrations.
import { loadConfig } from '../../config.ts';
import { migrateLatest, migrateRollback } from '../../db/migrate.ts';
import { sealAllSecrets } from '../../db/sealedSecrets.ts';
import { isSigningAlg, KEY_PUBLISHED_AHEAD_MS, rotateSigningKeys, SIGNING_ALGS } from '../../open/signingKeys.ts';
import { DEMO, seedDemo } from '../../accounts/seed.ts';
import { demoExists, demoInProduction } from '../../shared/errors.ts';
import { UsageError, type Command } from '../command.ts';

export const operationCommands: Record<string, Command> = {
  'demo seed': {
    usage: 'demo seed',
    summary:
      'creates the demo user, organization, app and API key and prints their secrets (not in production; `npm start` does it by itself in development)',
    options: [],
    needs: [],
    run: async (ctx) => {
      const config = loadConfig();
      if (config.NODE_ENV === 'production') throw demoInProduction();
      const seed = await seedDemo({ db: ctx.db, config, now: Date.now });
      if (!seed) throw demoExists(DEMO.login);
      return {
        login: seed.user.login,
        password: seed.user.password,
        organization: seed.org.namespace,
        client_id: seed.app.client_id,
        client_secret: seed.app.client_secret,
        redirect_uri: seed.app.redirect_uri,
        api_key: seed.apiKey.token,
        api_key_namespace: seed.apiKey.namespace,
        workflows: seed.workflows.map((w) => w.name),
      };
    },
  },
  // Prints key ids only: a private key never leaves src/open/signingKeys.ts.
  'keys rotate': {
    usage: 'keys rotate [--alg RS256|ES256] [--now]',
    summary: `new signing keys (ES256: proxy tokens and ES256 ID tokens; RS256: other ID tokens), published at once and signing ${KEY_PUBLISHED_AHEAD_MS / 60_000} minutes later (active_from), when the keys they replace retire (still published and verifying until their tokens expire); --alg: one algorithm only; --now: sign with them at once (a leaked key)`,
    options: ['alg', 'now'],
    needs: [],
    check: (v) => {
      if (v.alg !== undefined && !isSigningAlg(v.alg))
        throw new UsageError(`--alg must be ${SIGNING_ALGS.join(' or ')} (got "${v.alg}")`);
    },
    run: async (ctx, v) => {
      const algs = v.alg !== undefined && isSigningAlg(v.alg) ? [v.alg] : SIGNING_ALGS;
      const rotated = (await rotateSigningKeys(ctx, algs, { immediately: v.now ?? false })).map((r) => ({
        alg: r.alg,
        kid: r.kid,
        active_from: new Date(r.activeFrom).toISOString(),
        retired: r.retired,
      }));
      // `kid` and `retired` as this command printed them before RS256 keys: the ES256 (proxy-token) key's.
      const es256 = rotated.find((r) => r.alg === 'ES256');
      return { rotated, ...(es256 ? { kid: es256.kid, retired: es256.retired } : {}) };
    },
  },
  // Prints counts and the key's one-way id only.
  'secrets reseal': {
    usage: 'secrets reseal',
    summary:
      'seals every stored secret with SECRETS_KEY (after a key-encryption key rotation: the old key in SECRETS_KEY_PREVIOUS until this has run)',
    options: [],
    needs: [],
    run: async ({ db, sealer }) => ({ key_id: sealer.currentKeyId, ...(await sealAllSecrets(db, sealer)) }),
  },
  migrate: {
    usage: 'migrate',
    summary: 'applies pending migrations',
    options: [],
    needs: [],
    run: async ({ db, sealer }) => ({ applied: await migrateLatest(db, { sealer }) }),
  },
  'migrate rollback': {
    usage: 'migrate rollback [--all]',
    summary: 'rolls back the last batch (or every migration)',
    options: ['all'],
    needs: [],
    run: async ({ db, sealer }, v) => ({ rolled_back: await migrateRollback(db, { all: v.all ?? false, sealer }) }),
  },
};
