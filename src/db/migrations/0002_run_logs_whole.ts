import type { Knex } from 'knex';

// Workflow engine v2: a step's input and output are kept whole up to 200000
// characters (they were 500-character previews), which needs `longtext` on MySQL (`text` holds
// 65535 bytes); a step says when it was cut; a run keeps its total token usage.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.text('input_preview', 'longtext').nullable().alter();
    t.text('output_preview', 'longtext').nullable().alter();
    t.boolean('truncated').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('runs', (t) => {
    t.text('usage').nullable(); // JSON {prompt_tokens, completion_tokens, total_tokens}; null: none yet
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('usage');
  });
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('truncated');
    t.text('input_preview').nullable().alter();
    t.text('output_preview').nullable().alter();
  });
}
