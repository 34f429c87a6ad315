import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildDeclaredIndexes, type BuiltIndex } from '../../lib/documents/index-build.ts';
import { declaredPath, indexNames, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme']);
  await database.knex.raw(
    `insert into documents (tenant, collection, id, doc)
     select 'acme', 'events', 'id-' || n, jsonb_build_object('_id', 'id-' || n, 'at', n, 'kind', 'k' || (n % 7)) from generate_series(1, 50000) as n`,
  );
});
test.after.always(async () => {
  await database?.close();
});

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

function declaration(path: string, unique = false): IndexDeclaration {
  return { project: 'p', collection: 'events', fields: [{ path: declaredPath(path), direction: 1 }], unique };
}

/** Waits until a statement starting with `pattern` runs: a cancel that came earlier would cancel nothing. */
async function running(pattern: string): Promise<void> {
  for (;;) {
    const { rows } = await database.knex.raw<{ rows: unknown[] }>("select from pg_stat_activity where state = 'active' and query like ?", [pattern]);
    if (rows.length > 0) return;
    await sleep(20);
  }
}

async function indexState(name: string): Promise<'valid' | 'invalid' | 'absent'> {
  const { rows } = await database.knex.raw<{ rows: Array<{ valid: boolean }> }>('select indisvalid as valid from pg_index where indexrelid = to_regclass(?)', [name]);
  if (rows.length === 0) return 'absent';
  return rows[0]?.valid ? 'valid' : 'invalid';
}

test.serial('instances starting together build each declared index once, and none fails', async (t) => {
  const declarations = [declaration('at'), declaration('kind')];
  const outcomes = await Promise.all([1, 2, 3].map(() => buildDeclaredIndexes(database.url, declarations, quiet).done));
  for (const { query } of declarations.map(indexNames)) {
    const of = outcomes.map((built) => built.find((index) => index.name === query)?.outcome);
    t.deepEqual([...of].sort(), ['built', 'present', 'present'], query);
    t.is(await indexState(query), 'valid');
  }
});

test.serial('an index left invalid by a failed build is dropped and built again', async (t) => {
  const declared = declaration('kind');
  const { query } = indexNames(declared);
  await database.knex.raw('update pg_index set indisvalid = false where indexrelid = to_regclass(?)', [query]);
  t.is(await indexState(query), 'invalid');
  const built: readonly BuiltIndex[] = await buildDeclaredIndexes(database.url, [declared], quiet).done;
  t.deepEqual(built, [{ name: query, outcome: 'rebuilt' }]);
  t.is(await indexState(query), 'valid');
});

test.serial('a unique index that the documents already break is reported and removed, never left half-enforced', async (t) => {
  const declared = declaration('kind', true);
  const errors: string[] = [];
  const built = await buildDeclaredIndexes(database.url, [declared], { ...quiet, error: (fields) => errors.push(JSON.stringify(fields)) }).done;
  const { unique } = indexNames(declared);
  t.deepEqual(built.find((index) => index.name === unique), { name: unique, outcome: 'failed' });
  t.is(await indexState(unique as string), 'absent');
  t.regex(errors.join('\n'), /could not create unique index/);
  t.notRegex(errors.join('\n'), /k3/, 'the duplicated values stay out of the log');
});

test.serial('a build stopped part-way is cancelled; the next one drops what it left and builds it', async (t) => {
  const declared = declaration('at', true);
  const names = indexNames(declared);
  // A writer's open transaction holds the build in its wait for writers, so that it is stopped
  // part-way however fast the machine builds: at load 36 on 2 cores it finished before the stop.
  const writer = await database.knex.transaction();
  t.teardown(() => (writer.isCompleted() ? undefined : writer.rollback()));
  await writer.raw('lock table documents in row exclusive mode');
  let building!: () => void;
  const started = new Promise<void>((resolve) => {
    building = resolve;
  });
  const build = buildDeclaredIndexes(database.url, [declared], { ...quiet, info: (_fields, message) => message.startsWith('building') && building() });
  await started;
  await running(`create index concurrently if not exists ${names.query}%`);
  await build.stop();
  await writer.rollback();
  t.deepEqual(await build.done, [], 'nothing was built');
  t.is(await indexState(names.query), 'invalid');
  const built = await buildDeclaredIndexes(database.url, [declared], quiet).done;
  t.deepEqual(built.map(({ outcome }) => outcome), ['rebuilt', 'built']);
  t.is(await indexState(names.query), 'valid');
  t.is(await indexState(names.unique as string), 'valid');
});

test.serial('a declaration removed leaves nothing behind: its indexes, and the statistics objects of earlier releases, are dropped at the next build', async (t) => {
  const kept = declaration('kind');
  const removed = declaration('at', true);
  await buildDeclaredIndexes(database.url, [kept, removed], quiet).done;
  // What releases before this one created for each declared path, and cost every statement's planning.
  await database.knex.raw("create statistics if not exists docs_kind_0123456789 on (doc #> '{kind}'), (doc #>> '{kind}') from documents");
  const dropped: string[] = [];
  await buildDeclaredIndexes(database.url, [kept], { ...quiet, info: (fields, message) => message.startsWith('dropped') && dropped.push(JSON.stringify(fields)) }).done;
  const { query, unique } = indexNames(removed);
  t.is(await indexState(query), 'absent');
  t.is(await indexState(unique as string), 'absent');
  t.is(await indexState(indexNames(kept).query), 'valid');
  const { rows } = await database.knex.raw<{ rows: unknown[] }>("select from pg_statistic_ext where stxrelid = 'documents'::regclass");
  t.is(rows.length, 0);
  t.regex(dropped.join('\n'), new RegExp(query));
});
