// A front end for the browser test of the client package: a page whose module uses the installed
// package through an import map (its files served as they are: no bundler, no Node API, no
// polyfill), on an origin that also passes API calls on to the service, as a front end's own
// backend would (the service sends no CORS headers: tokens stay server-side, docs/oauth.md "CORS").
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

// The page's own module: what a front end would write (plain JavaScript, no build step).
const PAGE = `<!doctype html><meta charset="utf-8"><title>client</title>
<script type="importmap">{ "imports": {
  "openauth-workflows-client": "/node_modules/openauth-workflows-client/dist/index.js",
  "openapi-fetch": "/node_modules/openapi-fetch/dist/index.mjs"
} }</script>
<script type="module">
import { createApiClient, followRunEvents, streamChatCompletion, waitForRun } from 'openauth-workflows-client';
window.useClient = async (key, graph) => {
  const api = createApiClient(location.origin, { bearer: key });
  const created = await api.POST('/api/workflows', { body: { name: 'From a browser', ...graph } });
  const run = { workflowId: created.data.data.id, runId: '' };
  run.runId = (await api.POST('/api/workflows/{workflow_id}/run', { params: { path: { workflow_id: run.workflowId } }, body: { inputs: { ticket: 'hi' } } })).data.data.id;
  const ended = await waitForRun(api, run, { timeoutSeconds: 30 });
  const events = [];
  for await (const e of (await followRunEvents(api, run)).data) events.push(e.event);
  const streamed = await streamChatCompletion(api, { model: 'echo', messages: [{ role: 'user', content: 'from a browser' }] });
  let text = '';
  for await (const chunk of streamed.data) text += chunk.choices[0]?.delta.content ?? '';
  return { status: ended.data.status, last: events.at(-1), text };
};
</script>`;

/** Serves the page and the project's node_modules; passes every other request on to the service. */
export async function startFrontEnd(
  project: string,
  service: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(PAGE);
    if (url.pathname.startsWith('/node_modules/')) {
      const file = path.join(project, path.normalize(url.pathname));
      const body = await readFile(file).catch(() => undefined);
      if (!body || !file.startsWith(project)) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(body);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
    ) as Record<string, string>;
    const answer = await fetch(new URL(req.url!, service), {
      method: req.method!,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body) for await (const chunk of answer.body) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
