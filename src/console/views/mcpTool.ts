// "Use from an AI assistant": a workflow's section for the MCP server (src/mcp/). The server's
// URL, whether the workflow is one of the user's tools with the button that changes it (the API's
// updateWorkflow `mcp_tool`), and a client's configuration in one line.
import { html, type Html } from '../../html/html.ts';
import type { Workflow } from '../../workflows/service.ts';
import type { PageUser } from './format.ts';

export interface McpToolModel {
  user: PageUser;
  workflow: Pick<Workflow, 'id' | 'mcp_tool'>;
  /** The MCP server's address (BASE_URL + /mcp). */
  url: string;
  /** Whether clients may register themselves (CLIENT_REGISTRATION is not `off`): then the URL is all they need. */
  selfRegistration: boolean;
}

/**
 * The `mcpServers` entry MCP clients (Claude Desktop, Cursor, VS Code...) read, in one line: the URL
 * alone when they can register themselves and sign the user in, else with a token the user got.
 */
export const mcpConfigSnippet = (url: string, selfRegistration: boolean) =>
  JSON.stringify({
    mcpServers: {
      workflows: selfRegistration
        ? { type: 'http', url }
        : { type: 'http', url, headers: { Authorization: 'Bearer YOUR_OAUTH_ACCESS_TOKEN' } },
    },
  });

const signInHelp = (selfRegistration: boolean) =>
  selfRegistration
    ? html`Clients register themselves with this service and send you here to sign in and allow them (scope <code>workflows:run</code>); see the docs' page on MCP.`
    : html`Clients sign in with an OAuth access token of the <code>workflows:run</code> scope, from an application you registered (<a href="/settings/applications">Applications</a>); see the docs' page on MCP.`;

export function mcpToolSection({ user, workflow, url, selfRegistration }: McpToolModel): Html {
  const exposed = workflow.mcp_tool === true;
  return html`<section aria-labelledby="mcp-heading"><h2 id="mcp-heading">Use from an AI assistant</h2>
<p data-field="mcp-tool">${exposed ? html`This workflow is a tool of your MCP server: assistants you connect list it and can run it.` : html`This workflow is not a tool: assistants you connect do not see it.`}</p>
<form method="post" action="/workflows/${workflow.id}/mcp-tool"><input type="hidden" name="csrf_token" value="${user.csrf}"><input type="hidden" name="mcp_tool" value="${exposed ? 'false' : 'true'}">
<button type="submit"${exposed ? '' : html` class="primary"`} id="mcp-tool-toggle">${exposed ? 'Stop exposing it as a tool' : 'Expose it as a tool'}</button></form>
<p>MCP server (Streamable HTTP): <code data-copy="MCP URL">${url}</code></p>
<p><small>${signInHelp(selfRegistration)} Each call is a run of the workflow's current version and counts against your quotas and budgets.</small></p>
<details class="snippet mcp-config"><summary>Client configuration (JSON, one line)</summary><pre tabindex="0"><code data-copy="MCP client configuration">${mcpConfigSnippet(url, selfRegistration)}</code></pre></details></section>`;
}
