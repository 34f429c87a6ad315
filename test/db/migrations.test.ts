import test from 'ava';
import { execFile } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { listMigrations } from '../../lib/db/migration-files.ts';
import { createMigrationFile, migrateContract, migrateLatest, migrationStatus, rollbackLast } from '../../lib/db/migrations.ts';
import type { Knex } from 'knex';
import { createFreshDatabase, freshKnex } from '../helpers/database.ts';
import { startTestService } from '../helpers/service.ts';
import { scratchFolder } from '../helpers/scratch.ts';
import { migrationFolder, sqlMigration } from '../helpers/migrations.ts';

async function tables(knex: Knex): Promise<string[]> {
  const result = await knex.raw<{ rows: { tablename: string }[] }>(
    "select tablename from pg_tables where schemaname = 'public' and tablename not like 'knex_%' order by tablename",
  );
  return result.rows.map((row) => row.tablename);
}

test('every migration runs down and up again', async (t) => {
  const knex = await freshKnex(t);
  t.deepEqual(await migrateLatest(knex), listMigrations().map((file) => file.name), 'both kinds: no older code serves a new database');
  const migrated = await tables(knex);
  t.true(migrated.includes('tenants'));
  t.deepEqual(await knex('tenants').pluck('name'), ['default']);

  await rollbackLast(knex, true);
  t.deepEqual(await tables(knex), []);
  t.deepEqual((await migrationStatus(knex)).filter((state) => state.applied), []);

  await migrateLatest(knex);
  t.deepEqual(await tables(knex), migrated);
  t.deepEqual((await migrationStatus(knex)).filter((state) => !state.applied), []);
});

test('tenant data tables lead their primary key with tenant', async (t) => {
  const knex = await freshKnex(t);
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

test('a new migration from make migration passes the type check as it is, and runs up and down', async (t) => {
  const root = path.resolve(import.meta.dirname, '../..');
  const scratch = scratchFolder('migration');
  symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
  writeFileSync(path.join(scratch, 'package.json'), '{"type":"module"}');
  writeFileSync(path.join(scratch, 'tsconfig.json'), JSON.stringify({ extends: path.join(root, 'tsconfig.json'), include: ['*.ts'] }));
  const file = createMigrationFile('add_widgets', scratch);
  t.regex(path.basename(file), /^\d{14}_add_widgets\.ts$/);
  const tsc = path.join(root, 'node_modules/.bin/tsc');
  const checked = await promisify(execFile)(tsc, ['--noEmit', '-p', scratch]).then(() => '', (error: { stdout?: string }) => error.stdout ?? 'tsc failed');
  t.is(checked, '');
  const migration = (await import(pathToFileURL(file).href)) as { up: (knex: unknown) => Promise<void>; down: (knex: unknown) => Promise<void> };
  await t.notThrowsAsync(migration.up(undefined));
  await t.notThrowsAsync(migration.down(undefined));
  t.throws(() => createMigrationFile('Bad Name', scratch), { message: /must be lower-case letters, digits, _ or -/ });
});

const UNPARSABLE = `import type { Knex } from 'knex';\n\nexport async function up(knex: Knex): Promise<void> {\n  await knex.raw('select 1', { a: 1 };\n}\n\nexport async function down(_knex: Knex): Promise<void> {}\n`;

test('a migration that does not parse fails naming its file, on a new database (start-up) as on a migrated one', async (t) => {
  const directory = migrationFolder(t, { expand: { '29990101000001_unparsable.ts': UNPARSABLE } });
  const error = await t.throwsAsync(migrateLatest(await freshKnex(t), { directory }));
  t.log(error?.message);
  t.regex(error?.message ?? '', /^migration 29990101000001_unparsable\.ts failed: \S/);
  const migrated = await freshKnex(t);
  await migrateLatest(migrated);
  await t.throwsAsync(migrateLatest(migrated, { directory }), { message: /^migration 29990101000001_unparsable\.ts failed: \S/ });
});

test('a migration whose statement fails is named in the error, the statement and PostgreSQL\'s reason after it', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const directory = migrationFolder(t, { contract: { '29990101000002_typo.ts': sqlMigration(['selec 1']) } });
  await t.throwsAsync(migrateContract(knex, { directory }), { message: 'migration contract/29990101000002_typo.ts failed: selec 1 - syntax error at or near "selec"' });
  const fresh = await freshKnex(t);
  await t.throwsAsync(migrateLatest(fresh, { directory }), { message: 'migration contract/29990101000002_typo.ts failed: selec 1 - syntax error at or near "selec"' }, 'a new database');
});

test('a failing statement written over several lines is one line in the error, so that make migrate, which prints the first line, shows the reason', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const directory = migrationFolder(t, { expand: { '29990101000001_multiline.ts': sqlMigration(['\n    select\n      selec 1\n    ']) } });
  await t.throwsAsync(migrateLatest(knex, { directory }), { message: 'migration 29990101000001_multiline.ts failed: select selec 1 - syntax error at or near "1"' });
});

test('a script in a migrations folder not named as a migration is refused, naming it, never skipped in silence', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const unnamed = migrationFolder(t, { expand: { 'add_colour.ts': sqlMigration(['alter table spaces add column colour text']) } });
  const message = `${unnamed}/add_colour.ts is not named as a migration (<UTC timestamp>_<name>.ts, as make migration NAME=<name> writes it): rename it, or move it out of the folder`;
  await t.throwsAsync(migrateLatest(knex, { directory: unnamed }), { message });
  await t.throwsAsync(migrationStatus(knex, { directory: unnamed }), { message });
  const dotted = migrationFolder(t, { contract: { '29990101000001_drop.colour.js': '' } });
  await t.throwsAsync(migrationStatus(knex, { directory: dotted }), { message: /\/contract\/29990101000001_drop\.colour\.js is not named as a migration/ });
});

test('services starting at once against a new database all come up, and it is migrated once', async (t) => {
  const database = await createFreshDatabase();
  t.teardown(() => database.drop());
  const services = await Promise.all(Array.from({ length: 5 }, () => startTestService(t, { databaseUrl: database.url })));
  // Healthy within a while: on a loaded machine one probe can outlast its time limit.
  for (const service of services) t.is(await healthyStatus(service), 200);
  const names = await services[0]?.runtime.knex('knex_migrations').pluck('name');
  t.deepEqual(names?.sort(), listMigrations().map((file) => file.name).sort());
});

/** `/healthz`'s status, asked again for up to 20 s while it is not 200. */
async function healthyStatus(service: { fetch(pathname: string): Promise<Response> }): Promise<number> {
  const deadline = performance.now() + 20_000;
  let status = (await service.fetch('/healthz')).status;
  while (status !== 200 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    status = (await service.fetch('/healthz')).status;
  }
  return status;
}
