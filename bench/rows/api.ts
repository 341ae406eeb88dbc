// Rows 4-6: token detail (issues and signs a proxy token), the gateway with that proxy token on the
// built-in echo model, and the workflows list and create.
import type { RowGroup } from '../bench.ts';

export const NOT_AVAILABLE = 'n/a (endpoint not available)';
/** Whether a path is served at all (not a 404/405/501 from a route that does not exist yet). */
export const available = (status: number) => status !== 404 && status !== 405 && status !== 501;

export const THREE_NODE_WORKFLOW = {
  name: 'Bench summarize',
  description: 'text_input -> llm_call (echo) -> text_output',
  nodes: [
    { id: 'in', type: 'text_input', config: { variable: 'text' } },
    { id: 'llm', type: 'llm_call', config: { model: 'echo', temperature: 0, max_tokens: 64 } },
    { id: 'out', type: 'text_output', config: { format: 'plain' } },
  ],
  edges: [
    { from: 'in', to: 'llm' },
    { from: 'llm', to: 'out' },
  ],
};

export const apiRows: RowGroup = {
  ids: ['4', '5', '6'],
  async run(bench) {
    const { baseUrl } = bench.service;
    const { user, common, options } = bench;
    const auth = { authorization: `Bearer ${user.bearer}` };

    // 4. Token detail (issues and signs a proxy token).
    const detailUrl = `${baseUrl}/api/open/v1/${user.login}/tokens/${user.key.id}`;
    const detail = await fetch(detailUrl, { headers: auth });
    const proxyToken = detail.ok
      ? ((await detail.json()) as { proxy_access_token?: string }).proxy_access_token
      : undefined;
    if (options.wanted('4')) {
      bench.record(
        '4. GET token detail (proxy JWT)',
        available(detail.status)
          ? await bench.load({ kind: 'fixed', ...common, url: detailUrl, method: 'GET', headers: auth })
          : NOT_AVAILABLE,
        { target: '≥ 0.40x bare Express' },
      );
    }

    // 5. The gateway with a proxy token on the built-in echo model.
    if (options.wanted('5')) {
      const chatUrl = `${baseUrl}/serverless/v1/chat/completions`;
      const chatBody = JSON.stringify({
        model: 'echo',
        messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
      });
      const chatHeaders = { authorization: `Bearer ${proxyToken ?? 'none'}`, 'content-type': 'application/json' };
      const probe = proxyToken
        ? await fetch(chatUrl, { method: 'POST', headers: chatHeaders, body: chatBody })
        : undefined;
      bench.record(
        '5. POST chat/completions (proxy)',
        probe && available(probe.status)
          ? await bench.load({
              kind: 'fixed',
              ...common,
              url: chatUrl,
              method: 'POST',
              headers: chatHeaders,
              body: chatBody,
            })
          : NOT_AVAILABLE,
        { target: '≥ 0.40x bare Express' },
      );
    }

    // 6. Workflows: create, then list a page.
    if (options.wanted('6')) {
      const keyHeaders = { authorization: `Bearer ${user.key.token}`, 'content-type': 'application/json' };
      bench.record(
        '6a. POST /api/workflows',
        await bench.load({
          kind: 'fixed',
          ...common,
          url: `${baseUrl}/api/workflows`,
          method: 'POST',
          headers: keyHeaders,
          body: JSON.stringify(THREE_NODE_WORKFLOW),
        }),
      );
      bench.record(
        '6b. GET /api/workflows?per_page=20',
        await bench.load({
          kind: 'fixed',
          ...common,
          url: `${baseUrl}/api/workflows?per_page=20`,
          method: 'GET',
          headers: keyHeaders,
        }),
      );
    }
  },
};
