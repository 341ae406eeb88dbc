import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, testDialects, type TestDb } from '../../test/support/db.ts';
import { createUser } from '../accounts/users.ts';
import { prepared } from './prepared.ts';

describe.each(testDialects())('prepared queries on %s', (dialect) => {
  let t: TestDb;
  let ids: number[];
  beforeAll(async () => {
    t = await createTestDb(dialect);
    ids = [];
    for (const login of ['ada', 'grace', 'linus'])
      ids.push((await createUser(t, { login, password: 'test-password-1' })).id);
  });
  afterAll(() => t?.destroy());

  // A parameter used twice, literal bindings (the limit) between them, and values of two types.
  const others = prepared<{ id: number; prefix: string }>('prepared_test_others', (db, param) =>
    db('users')
      .where('id', '<>', param('id'))
      .andWhere('login', 'like', param('prefix'))
      .orWhere('id', param('id'))
      .orderBy('id')
      .limit(5)
      .select('id', 'login'),
  );

  it('binds each parameter where it stands, on every call with new values', async () => {
    expect(await others.rows(t.db, { id: ids[0]!, prefix: 'g%' })).toEqual([
      { id: ids[0], login: 'ada' },
      { id: ids[1], login: 'grace' },
    ]);
    expect(await others.rows(t.db, { id: ids[2]!, prefix: 'a%' })).toEqual([
      { id: ids[0], login: 'ada' },
      { id: ids[2], login: 'linus' },
    ]);
  });

  it('answers the first row or undefined, and passes values as data, never as SQL', async () => {
    const byLogin = prepared<{ login: string }>('prepared_test_by_login', (db, param) =>
      db('users').where('login', param('login')).first('login'),
    );
    expect(await byLogin.first(t.db, { login: 'grace' })).toEqual({ login: 'grace' });
    expect(await byLogin.first(t.db, { login: "grace' OR '1'='1" })).toBeUndefined();
  });

  it('runs writes and answers how many rows they changed (0 when a condition fails)', async () => {
    const rename = prepared<{ id: number; name: string }>('prepared_test_rename', (db, param) =>
      db('users')
        .where('id', param('id'))
        .whereNot('name', 'renamed')
        .update({ name: param('name') }),
    );
    expect(await rename.run(t.db, { id: ids[1]!, name: 'renamed' })).toBe(1);
    expect(await rename.run(t.db, { id: ids[1]!, name: 'renamed' })).toBe(0);
    expect(await rename.run(t.db, { id: -1, name: 'renamed' })).toBe(0);
    expect(await t.db('users').where('id', ids[1]!).first('name')).toEqual({ name: 'renamed' });
    const remove = prepared<{ login: string }>('prepared_test_delete', (db, param) =>
      db('users').where('login', param('login')).delete(),
    );
    expect(await remove.run(t.db, { login: 'nobody' })).toBe(0);
  });

  it("runs on a transaction's connection when given the transaction: its writes commit or roll back with it", async () => {
    const rename = prepared<{ id: number; name: string }>('prepared_test_rename_in_trx', (db, param) =>
      db('users')
        .where('id', param('id'))
        .update({ name: param('name') }),
    );
    const byId = prepared<{ id: number }>('prepared_test_name_by_id', (db, param) =>
      db('users').where('id', param('id')).first('name'),
    );
    await expect(
      t.db.transaction(async (trx) => {
        expect(await rename.run(trx, { id: ids[2]!, name: 'rolled back' })).toBe(1);
        expect(await byId.first(trx, { id: ids[2]! })).toEqual({ name: 'rolled back' }); // seen inside the transaction
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await byId.first(t.db, { id: ids[2]! })).not.toEqual({ name: 'rolled back' });
    await t.db.transaction(async (trx) => {
      await rename.run(trx, { id: ids[2]!, name: 'committed' });
    });
    expect(await byId.first(t.db, { id: ids[2]! })).toEqual({ name: 'committed' });
  });

  it('gives its connection back to the pool after a failing statement', async () => {
    const broken = prepared<{ id: number }>('prepared_test_broken', (db, param) =>
      db('no_such_table').where('id', param('id')).first(),
    );
    for (let i = 0; i < 15; i += 1) await expect(broken.first(t.db, { id: 1 })).rejects.toThrow();
    // The pool (10 connections) would be exhausted by now if a failure kept its connection.
    expect(await others.rows(t.db, { id: ids[0]!, prefix: 'l%' })).toHaveLength(2);
  });
});
