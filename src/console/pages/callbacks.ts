import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { enableCallback } from '../../hooks/callbacks.ts';
import { notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';

// The workflow page's Re-enable button of a paused callback: the API's enableCallback for the
// signed-in user, then back to the workflow page (303). Another user's callback is not found.

export function callbackPagesRouter(ctx: AppContext): Router {
  const router = Router();

  router.post('/workflows/:id/callbacks/:callbackId/enable', async (req, res) => {
    const user = await pageUser(ctx, req);
    const { id, callbackId } = req.params;
    try {
      await enableCallback(ctx, user.id, id, callbackId);
    } catch (err) {
      refusedWith(err, 404);
      return sendPage(res, 404, notFoundPage(user, 'callback'));
    }
    res.redirect(303, `/workflows/${id}?done=callback-enabled#callbacks-heading`);
  });

  return router;
}
