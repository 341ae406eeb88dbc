// Routes of /api/secrets (openapi.yaml: listSecrets, putSecret, deleteSecret). The contract
// validator has authenticated the API key and checked the name and body; values never come back.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/principal.ts';
import type { Operations } from '../http/operations.ts';
import * as service from './service.ts';

type PutBody = operations['putSecret']['requestBody']['content']['application/json'];
type ListBody = operations['listSecrets']['responses'][200]['content']['application/json'];
type SecretBody = operations['putSecret']['responses'][200]['content']['application/json'];

const userOf = (req: Request) => principalOf(req, 'apiKey').userId;
const nameOf = (req: Request) => String(req.params.secret_name);

export function secretOperations(ctx: AppContext): Operations {
  async function listSecrets(req: Request, res: Response<ListBody>) {
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json({ data: await service.listSecrets(ctx, userOf(req)) });
  }

  async function putSecret(req: Request, res: Response<SecretBody>) {
    const { secret, created } = await service.putSecret(ctx, userOf(req), nameOf(req), (req.body as PutBody).value);
    if (created) res.setHeader('Location', `/api/secrets/${secret.name}`);
    res.status(created ? 201 : 200).json({ data: secret });
  }

  async function deleteSecret(req: Request, res: Response) {
    await service.deleteSecret(ctx, userOf(req), nameOf(req));
    res.status(204).end();
  }

  return { listSecrets, putSecret, deleteSecret };
}
