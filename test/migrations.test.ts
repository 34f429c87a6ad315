import test from 'ava';
import { readdirSync } from 'node:fs';
import { createKnex } from '../lib/db/connect.ts';
import { MIGRATIONS_DIR, migrateLatest, migrationStatus, rollbackLast } from '../lib/db/migrations.ts';
import { createFreshDatabase } from './helpers/database.ts';

async function tables(knex: ReturnType<typeof createKnex>): Promise<string[]> {
  const result = await knex.raw<{ rows: { tablename: string }[] }>(
    "select tablename from pg_tables where schemaname = 'public' and tablename not like 'knex_%' order by tablename",
  );
  return result.rows.map((row) => row.tablename);
}

test('every migration runs down and up again', async (t) => {
  const database = await createFreshDatabase();
  const knex = createKnex(database.url);
  t.teardown(async () => {
    await knex.destroy();
    await database.drop();
  });
  const files = readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.ts'));
  t.deepEqual(await migrateLatest(knex), files.sort());
  const migrated = await tables(knex);
  t.true(migrated.includes('tenants'));
  t.deepEqual(await knex('tenants').pluck('name'), ['default']);

  await rollbackLast(knex, true);
  t.deepEqual(await tables(knex), []);
  t.deepEqual((await migrationStatus(knex)).applied, []);

  await migrateLatest(knex);
  t.deepEqual(await tables(knex), migrated);
  t.deepEqual((await migrationStatus(knex)).pending, []);
});

test('tenant data tables lead their primary key with tenant', async (t) => {
  const database = await createFreshDatabase();
  const knex = createKnex(database.url);
  t.teardown(async () => {
    await knex.destroy();
    await database.drop();
  });
  await migrateLatest(knex);
  const result = await knex.raw<{ rows: { table: string; first: string }[] }>(`
    select c.relname as table, a.attname as first
      from pg_index i
      join pg_class c on c.oid = i.indrelid
      join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum = i.indkey[0]
     where n.nspname = 'public' and (i.indisprimary or i.indisunique)
       and c.relname not in ('tenants') and c.relname not like 'knex_%'`);
  t.true(result.rows.length > 0);
  for (const row of result.rows) t.is(row.first, 'tenant', `${row.table} has a key that does not start with tenant`);
});
