import { Router, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { createAccessToken, deleteAccessToken, listAccessTokensOfUser } from '../../accounts/accessTokens.ts';
import { listOrgsForUser } from '../../accounts/orgs.ts';
import { apiKeyBudgetsOfUser } from '../../runs/monthlyBudgets.ts';
import { confirmPage } from '../views/confirm.ts';
import { accessTokensPage, tokenCreatedPage, type TokenInput } from '../views/accessTokens.ts';
import type { PageUser } from '../views/format.ts';
import type { FormProblem } from '../views/form.ts';
import { doneMessage, field, formProblemsOf, fields, notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';

// /settings/tokens: create and delete the user's raw access tokens (API keys).

async function showTokens(
  ctx: AppContext,
  res: Response,
  status: number,
  user: PageUser,
  problems: FormProblem[],
  input?: TokenInput,
  flash?: string,
): Promise<void> {
  const [tokens, orgs, budgets] = await Promise.all([
    listAccessTokensOfUser(ctx, user.id),
    listOrgsForUser(ctx, user.id),
    apiKeyBudgetsOfUser(ctx, user.id),
  ]);
  const namespaces = [user.login, ...orgs.map((o) => o.namespace)];
  sendPage(res, status, accessTokensPage({ user, tokens, budgets, namespaces, problems, input, flash }));
}

export function accessTokensRouter(ctx: AppContext): Router {
  const router = Router();

  router.get('/settings/tokens', async (req, res) => {
    await showTokens(ctx, res, 200, await pageUser(ctx, req), [], undefined, doneMessage(req));
  });

  router.post('/settings/tokens', async (req, res) => {
    const user = await pageUser(ctx, req);
    const input: TokenInput = {
      name: field(req, 'name'),
      namespace: field(req, 'namespace'),
      usageScenario: field(req, 'usage_scenario'),
      permissions: fields(req, 'permissions'),
      expiresInDays: field(req, 'expires_in_days'),
    };
    try {
      const expiresInDays =
        input.expiresInDays === ''
          ? undefined
          : /^\d{1,4}$/.test(input.expiresInDays)
            ? Number(input.expiresInDays)
            : NaN;
      const { token, record } = await createAccessToken(ctx, { userId: user.id, ...input, expiresInDays });
      sendPage(res, 200, tokenCreatedPage({ user, token, record }));
    } catch (err) {
      const problem = refusedWith(err, 400, 404);
      // A namespace the user cannot use (left the org since the form was shown) is about that field.
      const problems =
        problem.status === 404 ? [{ field: 'namespace', message: problem.message }] : formProblemsOf(problem);
      await showTokens(ctx, res, 400, user, problems, input);
    }
  });

  router.get('/settings/tokens/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    const token = (await listAccessTokensOfUser(ctx, user.id)).find((t) => t.id === Number(req.params.id));
    if (!token) return sendPage(res, 404, notFoundPage(user, 'access token'));
    sendPage(
      res,
      200,
      confirmPage({
        user,
        current: '/settings/tokens',
        title: `Delete ${token.name}?`,
        consequence: `Anything calling the API with ${token.token_prefix}… (namespace ${token.namespace}), or with proxy tokens minted from it, is refused from now on. This cannot be undone.`,
        action: `/settings/tokens/${token.id}/delete`,
        button: 'Delete this token',
        cancel: '/settings/tokens',
      }),
    );
  });

  router.post('/settings/tokens/:id/delete', async (req, res) => {
    const user = await pageUser(ctx, req);
    try {
      // Proxy tokens minted from it are refused from their next call on (src/open/proxyTokenAuth.ts).
      await deleteAccessToken(ctx, user.id, Number(req.params.id));
      res.redirect(303, '/settings/tokens?done=token-deleted');
    } catch (err) {
      refusedWith(err, 404);
      sendPage(res, 404, notFoundPage(user, 'access token'));
    }
  });

  return router;
}
