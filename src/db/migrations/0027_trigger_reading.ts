import type { Knex } from 'knex';

// How a trigger reads what its sender sends (src/hooks/hookInputs.ts, signatures.ts): its input
// templates (input name -> Liquid template over the body, headers and query) as JSON text, null to
// read the body by default; and the signature its sender makes, by scheme, with the secret sealed
// (src/shared/sealing.ts, bound to the row), null when it verifies none.

const TABLE = 'workflow_triggers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.text('inputs').nullable();
    t.string('signature_scheme', 32).nullable();
    t.text('signature_secret').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable(TABLE, (t) => {
    t.dropColumn('signature_secret');
    t.dropColumn('signature_scheme');
    t.dropColumn('inputs');
  });
}
