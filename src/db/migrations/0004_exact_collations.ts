import type { Knex } from 'knex';
import { dialectOf } from '../knex.ts';
import { TABLES_IN_CREATION_ORDER } from './0001_initial.ts';

// Every column compares exactly, on both dialects, whatever the server's default collation.
//
// PostgreSQL's (deterministic) collations already compare strings code point for code point. MySQL
// and MariaDB create tables in the server's default collation, which out of the box is
// case- and accent-insensitive (`utf8mb4_general_ci` on MariaDB 10.x, `utf8mb4_0900_ai_ci` on
// MySQL 8): there `Idempotency-Key: ABC-1` found the run of `abc-1`, `WF_...` found `wf_...`,
// `search=COMPLETED` matched the status `completed`, and every emoji equalled every other.
// So each table, and with it every column, is converted to `utf8mb4_bin`. Where the product wants
// case-insensitivity the code does it and the column holds the folded form (logins and namespaces
// are stored in lower case; workflow search matches `workflows.name_lower`).
//
// A table created by a later migration must say so too: `t.charset('utf8mb4'); t.collate('utf8mb4_bin')`
// (knex applies both on MySQL only). src/db/migrate.test.ts checks every column.

export const EXACT_COLLATION = 'utf8mb4_bin';

// MySQL and MariaDB refuse to change the collation of a column a foreign key joins (even with
// FOREIGN_KEY_CHECKS=0): the three text foreign keys are dropped, both sides converted, and they
// are added back as 0001 made them.
const TEXT_FOREIGN_KEYS = [
  { table: 'access_tokens', column: 'namespace', parent: 'namespaces', parentColumn: 'name' },
  { table: 'runs', column: 'workflow_id', parent: 'workflows', parentColumn: 'id' },
  { table: 'run_steps', column: 'run_id', parent: 'runs', parentColumn: 'id' },
];

async function convertEveryTable(knex: Knex, collation: string | null): Promise<void> {
  for (const fk of TEXT_FOREIGN_KEYS) {
    await knex.schema.alterTable(fk.table, (t) => t.dropForeign([fk.column]));
  }
  for (const table of TABLES_IN_CREATION_ORDER) {
    await knex.raw(`ALTER TABLE ?? CONVERT TO CHARACTER SET utf8mb4${collation ? ` COLLATE ${collation}` : ''}`, [table]);
  }
  for (const fk of TEXT_FOREIGN_KEYS) {
    await knex.schema.alterTable(fk.table, (t) => t.foreign(fk.column).references(fk.parentColumn).inTable(fk.parent).onDelete('CASCADE'));
  }
}

export async function up(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'mysql') await convertEveryTable(knex, EXACT_COLLATION);
}

export async function down(knex: Knex): Promise<void> {
  // Back to the character set's default collation (what 0001 created on a default server).
  if (dialectOf(knex) === 'mysql') await convertEveryTable(knex, null);
}
