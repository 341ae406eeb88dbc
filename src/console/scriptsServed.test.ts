import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/db.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// The console's scripts as the pages load them: built at start (pages/scripts.ts), served from
// /assets/ under the pages' CSP, cached for an hour (the app sets no automatic ETag).

describe.each(testDialects())('the console scripts served (%s)', (dialect) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dialect });
  });
  afterAll(() => server.close());

  it('serves every script a page names, as JavaScript cached for an hour, under a CSP allowing no inline script', async () => {
    const page = await fetch(`${server.baseUrl}/login`);
    const pageCsp = page.headers.get('content-security-policy') ?? '';
    // Scripts from our own origin only: no inline script, no event-handler attribute.
    expect(pageCsp).toMatch(/(^|;)script-src 'self'(;|$)/);
    expect(pageCsp).toMatch(/(^|;)script-src-attr 'none'(;|$)/);
    const sources = [...(await page.text()).matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources).toEqual(['/assets/console.js']);
    for (const path of ['/assets/console.js', '/assets/editor.js']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe('text/javascript; charset=utf-8');
      expect(res.headers.get('cache-control'), path).toBe('public, max-age=3600');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(await res.text(), path).toContain('data-');
    }
  });

  it("serves the canvas library's stylesheet (the one its package exports) as CSS cached for an hour", async () => {
    const res = await fetch(`${server.baseUrl}/assets/canvas.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await res.text()).toContain('.react-flow__handle');
    const editor = await (await fetch(`${server.baseUrl}/assets/editor.js`)).text();
    expect(editor).toContain('data-canvas');
  });

  it('serves no other name under /assets/ (the editor fields are inside editor.js)', async () => {
    for (const path of ['/assets/editor-fields.js', '/assets/format.js', '/assets/nothing.js']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      expect(res.status, path).toBe(404);
    }
  });
});
