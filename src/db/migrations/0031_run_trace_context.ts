import type { Knex } from 'knex';

// The W3C trace context (`traceparent`) a run was created in, when tracing: a run resumed at an
// approval, retried, redelivered after its worker died, links its new span to this one, whose
// spans have long ended. Null for runs created without tracing.

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.string('trace_context', 128).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('runs', (t) => {
    t.dropColumn('trace_context');
  });
}
