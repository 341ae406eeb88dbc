import { describe, expect, it } from 'vitest';
import { mcpToolSection } from './mcpTool.ts';

// The "Use from an AI assistant" section tells a client what it needs: the URL alone when clients
// may register themselves (CLIENT_REGISTRATION open or by initial access token), else a token too.

const model = (selfRegistration: boolean) => ({
  user: { id: 1, login: 'alice', csrf: 'c' },
  workflow: { id: 'wf_1', mcp_tool: true },
  url: 'https://workflows.example.com/mcp',
  selfRegistration,
});

function snippetOf(page: string): unknown {
  const code = /data-copy="MCP client configuration">([^<]*)</.exec(page)![1]!;
  return JSON.parse(code.replaceAll('&quot;', '"'));
}

describe('the MCP section of a workflow page', () => {
  it('gives the URL alone when clients register themselves, and says they sign the user in', () => {
    const page = String(mcpToolSection(model(true)));
    expect(snippetOf(page)).toEqual({
      mcpServers: { workflows: { type: 'http', url: 'https://workflows.example.com/mcp' } },
    });
    expect(page).toContain('Clients register themselves with this service');
    expect(page).not.toContain('/settings/applications');
  });

  it('gives the URL with a token placeholder when registration is off, pointing to Applications', () => {
    const page = String(mcpToolSection(model(false)));
    expect(snippetOf(page)).toEqual({
      mcpServers: {
        workflows: {
          type: 'http',
          url: 'https://workflows.example.com/mcp',
          headers: { Authorization: 'Bearer YOUR_OAUTH_ACCESS_TOKEN' },
        },
      },
    });
    expect(page).toContain('href="/settings/applications"');
  });
});
