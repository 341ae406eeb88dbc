// The approval example (examples/workflows/approval.json) and its run's node.waiting event, for the
// approval tests of runs and of the console's pages.
import { readFileSync } from 'node:fs';
import type { Schemas } from '../../client/src/index.ts';

type WorkflowCreate = Schemas['WorkflowCreate'];

export const approvalExample = (timeoutSeconds?: number): WorkflowCreate => {
  const workflow = JSON.parse(
    readFileSync(new URL('../../examples/workflows/approval.json', import.meta.url), 'utf8'),
  ) as WorkflowCreate;
  if (timeoutSeconds !== undefined)
    for (const node of workflow.nodes ?? [])
      if (node.type === 'approval') (node.config as { timeout_seconds?: number }).timeout_seconds = timeoutSeconds;
  return workflow;
};

/** The run's node.waiting event, read from its event stream (which stays open while the run waits). */
export async function waitingEvent(
  baseUrl: string,
  token: string,
  workflowId: string,
  runId: string,
): Promise<{ node_id: string; message: string; resume_url: string; approval_url: string; expires_at: string }> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/api/workflows/${workflowId}/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended without node.waiting: ${text}`);
      text += new TextDecoder().decode(value);
      const match = /event: node\.waiting\ndata: (.*)\n/.exec(text);
      if (match) return JSON.parse(match[1]!) as Awaited<ReturnType<typeof waitingEvent>>;
    }
  } finally {
    controller.abort();
  }
}
