// The MCP server of one request (router.ts): the SDK's low-level Server with the two tool
// methods. Tools are the user's workflows marked `mcp_tool`, their schemas derived from the graph
// (tools.ts); a call is a run (calls.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../context.ts';
import type { RunStarts } from '../runs/service.ts';
import { Problem } from '../shared/errors.ts';
import { getWorkflow, listMcpTools } from '../workflows/service.ts';
import { callTool } from './calls.ts';
import type { InFlightCalls } from './inFlight.ts';
import { toolOf } from './tools.ts';

/** The most tools `tools/list` lists (the oldest first); more would swamp a model's context anyway. */
export const MAX_TOOLS = 200;

/** Who is calling: the user, and a key naming their sign-in (their calls' cancellations, router.ts). */
export interface Caller {
  userId: number;
  key: string;
}

/** An idempotency key a client may send in the call's `_meta`, as the API's Idempotency-Key header. */
function idempotencyKeyOf(meta: Record<string, unknown> | undefined): string | undefined {
  const key = meta?.idempotency_key;
  return typeof key === 'string' && key.length > 0 && key.length <= 255 ? key : undefined;
}

/** The workflow of a tool the caller may call: their own, live and exposed; else MCP's unknown tool. */
async function exposedWorkflow(ctx: AppContext, userId: number, name: string) {
  const unknown = new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  try {
    const workflow = await getWorkflow(ctx, userId, name);
    if (!workflow.mcp_tool) throw unknown;
    return workflow;
  } catch (err) {
    if (err instanceof Problem) throw unknown; // another user's workflow is as unknown as none
    throw err;
  }
}

export function mcpServer(ctx: AppContext, runStarts: RunStarts, caller: Caller, inFlight: InFlightCalls): Server {
  const server = new Server(
    { name: 'openauth-workflows', title: 'Workflows', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: 'Each tool runs one of your workflows and answers with its output.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await listMcpTools(ctx, caller.userId, MAX_TOOLS)).map(toolOf),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const workflow = await exposedWorkflow(ctx, caller.userId, request.params.name);
    const token = request.params._meta?.progressToken;
    const controller = new AbortController();
    const forget = inFlight.add(caller.key, extra.requestId, controller);
    try {
      return await callTool(ctx, runStarts, {
        userId: caller.userId,
        workflowId: workflow.id,
        args: request.params.arguments ?? {},
        idempotencyKey: idempotencyKeyOf(request.params._meta),
        progress:
          token === undefined
            ? undefined
            : (progress, message) =>
                extra.sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, progress, message },
                }),
        signal: AbortSignal.any([controller.signal, extra.signal]),
      });
    } finally {
      forget();
    }
  });

  // The cancelled call was received by another request's server (stateless: one per request).
  server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const { requestId, reason } = notification.params;
    if (requestId !== undefined) inFlight.cancel(caller.key, requestId, reason ?? 'cancelled by the client');
  });
  return server;
}
