import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { Knex } from 'knex';
import { migrationCommands } from '../../lib/cli/migrate.ts';
import { createMigrationFile, listMigrations } from '../../lib/db/migration-files.ts';
import { migrateContract, migrateLatest, migrationStatus, rollbackLast } from '../../lib/db/migrations.ts';
import { createFreshDatabase, freshKnex, testKnex } from '../helpers/database.ts';
import { migrationFolder, REPOSITORY, sqlMigration } from '../helpers/migrations.ts';

/**
 * Expand and contract migrations (SPEC §18.1): expand ones run before the new code serves
 * (`migrateLatest`: make migrate and start-up), contract ones once every instance runs it
 * (`migrateContract`); a new database takes both at once; the status lists both.
 */

const EXPAND = { '29990101000001_widgets_colour.ts': sqlMigration(['alter table spaces add column colour text'], ['alter table spaces drop column colour']) };
const CONTRACT = { '29990101000002_drop_schemas_default.ts': sqlMigration(['alter table spaces alter column schemas drop default'], ["alter table spaces alter column schemas set default '{}'"]) };
const REAL_FILES = listMigrations();
const REAL = REAL_FILES.map((file) => file.name);

async function columnDefault(knex: Knex): Promise<string | null> {
  const { rows } = await knex.raw("select column_default from information_schema.columns where table_name = 'spaces' and column_name = 'schemas'");
  return rows[0]?.column_default ?? null;
}

test('make migrate runs the expand migrations only; make migrate-contract runs the contract ones; the status shows both with their kind', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const directory = migrationFolder(t, { expand: EXPAND, contract: CONTRACT });

  t.deepEqual(await migrateLatest(knex, { directory }), ['29990101000001_widgets_colour.ts']);
  t.is(await columnDefault(knex), "'{}'::text[]", 'the contract migration has not run');
  const waiting = (await migrationStatus(knex, { directory })).filter((state) => !state.applied);
  t.deepEqual(waiting, [{ name: 'contract/29990101000002_drop_schemas_default.ts', kind: 'contract', applied: false }]);
  t.deepEqual(await migrateLatest(knex, { directory }), [], 'a second start-up finds nothing to do');

  t.deepEqual(await migrateContract(knex, { directory }), ['contract/29990101000002_drop_schemas_default.ts']);
  t.is(await columnDefault(knex), null);
  const states = await migrationStatus(knex, { directory });
  t.true(states.every((state) => state.applied));
  t.deepEqual(
    states.map((state) => [state.name, state.kind]),
    [...REAL_FILES.map((file) => [file.name, file.kind]), ['29990101000001_widgets_colour.ts', 'expand'], ['contract/29990101000002_drop_schemas_default.ts', 'contract']],
  );

  t.deepEqual(await rollbackLast(knex, false, { directory }), ['contract/29990101000002_drop_schemas_default.ts'], 'make rollback reverts the last run, of either kind');
  t.is(await columnDefault(knex), "'{}'::text[]");
  t.deepEqual(await rollbackLast(knex, false, { directory }), ['29990101000001_widgets_colour.ts']);
});

test('a new database takes every migration, contract ones included: no older code can be serving', async (t) => {
  const knex = await freshKnex(t);
  const directory = migrationFolder(t, { expand: EXPAND, contract: CONTRACT });
  t.deepEqual(await migrateLatest(knex, { directory }), [...REAL, '29990101000001_widgets_colour.ts', 'contract/29990101000002_drop_schemas_default.ts']);
  t.is(await columnDefault(knex), null);
});

test('the migrations one run applies are one batch, which make rollback reverts together', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const directory = migrationFolder(t, {
    expand: { ...EXPAND, '29990101000003_widgets_size.ts': sqlMigration(['alter table spaces add column size int'], ['alter table spaces drop column size']) },
  });
  t.deepEqual(await migrateLatest(knex, { directory }), ['29990101000001_widgets_colour.ts', '29990101000003_widgets_size.ts']);
  t.deepEqual(await rollbackLast(knex, false, { directory }), ['29990101000003_widgets_size.ts', '29990101000001_widgets_colour.ts']);
});

test('an expand migration waits for the contract migrations named before it: make migrate says to run make migrate-contract first', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const later = { '29990101000003_widgets_size.ts': sqlMigration(['alter table spaces add column size int']) };
  const directory = migrationFolder(t, { expand: { ...EXPAND, ...later }, contract: CONTRACT });
  await t.throwsAsync(migrateLatest(knex, { directory }), {
    message:
      'the contract migration contract/29990101000002_drop_schemas_default.ts has not run, and the pending expand migration 29990101000003_widgets_size.ts comes after it: ' +
      'run make migrate-contract first (once every instance runs the release that brought it), then migrate',
  });
  t.deepEqual(await migrateContract(knex, { directory }), ['29990101000001_widgets_colour.ts', 'contract/29990101000002_drop_schemas_default.ts', '29990101000003_widgets_size.ts']);
});

test('an instance of the release before starts on a database its successor expanded, and refuses one its successor contracted', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const next = migrationFolder(t, { expand: EXPAND, contract: CONTRACT });
  await migrateLatest(knex, { directory: next });
  t.deepEqual(await migrateLatest(knex), [], 'the release before restarts during the rollout');
  t.deepEqual(
    (await migrationStatus(knex)).filter((state) => state.kind === 'unknown').map((state) => state.name),
    ['29990101000001_widgets_colour.ts'],
  );
  await migrateContract(knex, { directory: next });
  await t.throwsAsync(migrateLatest(knex), {
    message: /^this release is older than the database: contract migrations of a later release have run \(contract\/29990101000002_drop_schemas_default\.ts\)/,
  });
});

test('make rollback refuses, naming them, while the database has migrations of a later release, which its own make rollback reverts', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  const next = migrationFolder(t, { expand: EXPAND });
  await migrateLatest(knex, { directory: next });
  await t.throwsAsync(rollbackLast(knex), {
    message: 'the database has migrations this release does not hold (29990101000001_widgets_colour.ts): run make rollback with the release that has them first (README, Going back)',
  });
  t.true((await migrationStatus(knex, { directory: next })).every((state) => state.applied), 'nothing reverted');
  t.deepEqual(await rollbackLast(knex, false, { directory: next }), ['29990101000001_widgets_colour.ts']);
  t.deepEqual(await rollbackLast(knex, true), REAL.toReversed(), 'then the release before reverts its own');
});

test('make rollback refuses to revert the run that installed the database, which would drop every table and its data', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  await knex('tenants').insert({ name: 'acme' });
  await t.throwsAsync(rollbackLast(knex), {
    message: `make rollback would revert every migration this database has (batch 1, ${REAL.length} migrations: the run that installed it), dropping every table with its data: it reverts a deploy's migrations, not an installation (drop the database to start again)`,
  });
  t.true((await migrationStatus(knex)).every((state) => state.applied), 'nothing reverted');
  t.is((await knex('tenants').where({ name: 'acme' })).length, 1);
  const directory = migrationFolder(t, { expand: EXPAND });
  await migrateLatest(knex, { directory });
  t.deepEqual(await rollbackLast(knex, false, { directory }), ['29990101000001_widgets_colour.ts'], 'a later run is reverted as before');
});

test('make migration writes an expand migration by default, a contract one in migrations/contract with KIND=contract', async (t) => {
  const directory = migrationFolder(t, { before: '0' });
  const expand = createMigrationFile('add_widgets', directory);
  const contract = createMigrationFile('drop_gadgets', directory, 'contract');
  t.is(path.dirname(expand), directory);
  t.is(path.dirname(contract), path.join(directory, 'contract'));
  t.regex(readFileSync(expand, 'utf8'), /Expand: runs while the release before still serves/);
  t.regex(readFileSync(contract, 'utf8'), /Contract: runs once every instance runs the new release/);
  t.deepEqual(
    listMigrations(directory).map((file) => [file.kind, file.name.replace(/\d{14}/, 'STAMP')]),
    [
      ['expand', 'STAMP_add_widgets.ts'],
      ['contract', 'contract/STAMP_drop_gadgets.ts'],
    ],
  );
  await t.throwsAsync(migrationCommands.migration?.(['x', 'later']) ?? Promise.resolve(''), { message: 'KIND must be expand or contract, not "later"' });
});

test('make migration names a new migration after every existing one of either kind, even one dated later than now: it runs after what it builds on', async (t) => {
  const directory = migrationFolder(t, { contract: { '29990101000005_dated_ahead.ts': sqlMigration([]) } });
  const expand = createMigrationFile('after_it', directory);
  t.is(path.basename(expand), '29990101000006_after_it.ts', 'one second after the contract migration dated ahead');
  const contract = createMigrationFile('after_both', directory, 'contract');
  t.is(path.basename(contract), '29990101000007_after_both.ts');
  const knex = await freshKnex(t);
  const status = (await migrationStatus(knex, { directory })).map((state) => state.name);
  t.deepEqual(status.slice(-3), ['contract/29990101000005_dated_ahead.ts', '29990101000006_after_it.ts', 'contract/29990101000007_after_both.ts'], 'make migrate-status lists them last');
  const repository = migrationFolder(t);
  const latest = REAL_FILES.map((file) => path.basename(file.path)).sort().at(-1) ?? '';
  t.true(path.basename(createMigrationFile('next', repository)) > latest, 'after the repository\'s migrations, whatever the clock says');
});

const CONCURRENT_INDEX = `import type { Knex } from 'knex';
import { createIndexConcurrently } from '${REPOSITORY}/lib/db/migration-tools.ts';
export const config = { transaction: false };
export async function up(knex: Knex): Promise<void> {
  await createIndexConcurrently(knex, 'spaces_by_update', 'on spaces (tenant, updated_at)');
}
export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists spaces_by_update');
}
`;

test('instances starting at once while one builds an index concurrently all come up: the others wait for the migration lock without holding a snapshot the build would wait for', async (t) => {
  const database = await createFreshDatabase();
  const instances = Array.from({ length: 3 }, () => testKnex(database.url));
  t.teardown(async () => {
    await Promise.all(instances.map((knex) => knex.destroy()));
    await database.drop();
  });
  await migrateLatest(instances[0] as Knex);
  const directory = migrationFolder(t, { expand: { '29990101000004_spaces_by_update.ts': CONCURRENT_INDEX } });
  const runs = await Promise.all(instances.map((knex) => migrateLatest(knex, { directory })));
  t.deepEqual(runs.flat(), ['29990101000004_spaces_by_update.ts']);
});

test('a migration moved to the other folder after it ran is refused, naming both names, rather than run a second time', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  await migrateLatest(knex, { directory: migrationFolder(t, { expand: EXPAND }) });
  const moved = migrationFolder(t, { contract: EXPAND });
  const message =
    'contract/29990101000001_widgets_colour.ts ran as 29990101000001_widgets_colour.ts: a migration that ran keeps its folder (its kind), or it would run again; move it back';
  await t.throwsAsync(migrationStatus(knex, { directory: moved }), { message });
  await t.throwsAsync(migrateContract(knex, { directory: moved }), { message });
});

test('a run that died mid-migration (kill -9 during a concurrent index build) does not stop the next run: it resumes', async (t) => {
  const knex = await freshKnex(t);
  await migrateLatest(knex);
  // What knex's own lock looks like after a run that held it outside a transaction (config.transaction false) was killed.
  await knex('knex_migrations_lock').update({ is_locked: 1 });
  const directory = migrationFolder(t, { expand: EXPAND });
  t.deepEqual(await migrateLatest(knex, { directory }), ['29990101000001_widgets_colour.ts']);
  await knex('knex_migrations_lock').update({ is_locked: 1 });
  t.deepEqual(await rollbackLast(knex, false, { directory }), ['29990101000001_widgets_colour.ts']);
});
