import type { Knex } from 'knex';

// A workflow its owner exposes as a tool of the MCP server (src/mcp/): `workflows.mcp_tool`, false
// for every workflow until its owner sets it. The MCP server lists a user's tools by
// (user_id, mcp_tool) among the live ones, so the index leads with the user.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflows', (t) => {
    t.boolean('mcp_tool').notNullable().defaultTo(false);
    t.index(['user_id', 'mcp_tool'], 'workflows_user_mcp_tool');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workflows', (t) => {
    t.dropIndex(['user_id', 'mcp_tool'], 'workflows_user_mcp_tool');
    t.dropColumn('mcp_tool');
  });
}
