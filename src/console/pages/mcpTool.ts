import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { updateWorkflow } from '../../workflows/service.ts';
import { field, notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';

// POST /workflows/{id}/mcp-tool: the "Use from an AI assistant" section's button (views/mcpTool.ts)
// exposes the workflow as an MCP tool or stops exposing it, through the API's updateWorkflow.

export function mcpToolPagesRouter(ctx: AppContext): Router {
  const router = Router();
  router.post('/workflows/:id/mcp-tool', async (req, res) => {
    const user = await pageUser(ctx, req);
    const expose = field(req, 'mcp_tool') === 'true';
    try {
      await updateWorkflow(ctx, user.id, req.params.id, { mcp_tool: expose }, undefined);
    } catch (err) {
      refusedWith(err, 404);
      return sendPage(res, 404, notFoundPage(user, 'workflow'));
    }
    res.redirect(303, `/workflows/${req.params.id}?done=${expose ? 'mcp-tool-on' : 'mcp-tool-off'}#mcp-heading`);
  });
  return router;
}
