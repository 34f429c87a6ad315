import test from 'ava';
import { documentStore } from '../../lib/documents/index.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { declaredPath, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import { MAX_PROJECT_INDEXES, MAX_PROJECT_PATHS } from '../../lib/projects/index-file.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

/**
 * What a project's declared indexes, at the bound, cost the planning of another tenant's
 * statement on another collection: two databases holding the same documents, one with the
 * declarations, measured in turns so that the machine's load falls on both alike.
 */

const ROUNDS = 400;
let plain: MigratedDatabase;
let declared: MigratedDatabase;

/** The bound at its most expensive: unique entries (two indexes each) where they fit, the paths shared out among the entries. */
function declarationsAtTheBound(): IndexDeclaration[] {
  const unique = Math.floor(MAX_PROJECT_INDEXES / 2);
  const entries = unique + (MAX_PROJECT_INDEXES % 2);
  const perEntry = MAX_PROJECT_PATHS / entries;
  return Array.from({ length: entries }, (_, entry) => ({
    project: 'heavy',
    collection: `c${entry}`,
    unique: entry < unique,
    fields: Array.from({ length: perEntry }, (_, field) => ({ path: declaredPath(`entry${entry}.field${field}`), direction: 1 as const })),
  }));
}

async function withDocuments(): Promise<MigratedDatabase> {
  const database = await migratedDatabase(['acme', 'other']);
  await database.knex.raw(
    `insert into documents (tenant, collection, id, doc)
     select t, 'items', 'id-' || n, jsonb_build_object('_id', 'id-' || n, 'n', n) from generate_series(1, 20000) n, unnest(array['acme', 'other']) t`,
  );
  return database;
}

test.before(async () => {
  [plain, declared] = await Promise.all([withDocuments(), withDocuments()]);
  await buildDeclaredIndexes(declared.url, declarationsAtTheBound(), { info: () => {}, warn: () => {}, error: () => {} }).done;
  await Promise.all([plain, declared].map((database) => database.knex.raw('vacuum analyze documents')));
});
test.after.always(async () => {
  await Promise.all([plain?.close(), declared?.close()]);
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function planningMs(database: MigratedDatabase): Promise<number> {
  const { rows } = await database.tenantDatabase.query<{ 'QUERY PLAN': string }>('other', {
    sql: 'explain (summary) select "doc" from "documents" where "tenant" = $3 and (collection = $1) and (id = $2) order by id limit 1',
    bindings: ['items', 'id-777', 'other'],
  });
  const line = rows.map((row) => row['QUERY PLAN']).find((text) => text.startsWith('Planning Time'));
  return Number(/([\d.]+) ms/.exec(line ?? '')?.[1]);
}

async function findOneMs(database: MigratedDatabase): Promise<number> {
  const items = documentStore(database.tenantDatabase, 'other').collection('items');
  const started = performance.now();
  await items.findOne({ _id: 'id-777' });
  return performance.now() - started;
}

test.serial('the build leaves no statistics object on documents: each one cost every statement\'s planning', async (t) => {
  const { rows } = await declared.knex.raw<{ rows: unknown[] }>("select from pg_statistic_ext where stxrelid = 'documents'::regclass");
  t.is(rows.length, 0);
});

/**
 * Planning is read from EXPLAIN (the server's own clock, steady under load); what it adds is
 * held against the findOne's whole time as the service runs it (its transaction, round trips).
 */
test.serial('declarations at the bound add at most 10 % to another tenant\'s findOne by _id on another collection', async (t) => {
  const times = { plain: { planning: [] as number[], findOne: [] as number[] }, declared: { planning: [] as number[], findOne: [] as number[] } };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, database] of round % 2 === 0 ? ([['plain', plain], ['declared', declared]] as const) : ([['declared', declared], ['plain', plain]] as const)) {
      times[name].planning.push(await planningMs(database));
      times[name].findOne.push(await findOneMs(database));
    }
  }
  const planning = { plain: median(times.plain.planning), declared: median(times.declared.planning) };
  const findOne = { plain: median(times.plain.findOne), declared: median(times.declared.findOne) };
  t.log(`planning (EXPLAIN): ${planning.plain.toFixed(3)} ms without declarations, ${planning.declared.toFixed(3)} ms with ${MAX_PROJECT_INDEXES} indexes over ${MAX_PROJECT_PATHS} paths`);
  t.log(`findOne by _id as the service runs it: ${findOne.plain.toFixed(3)} ms without, ${findOne.declared.toFixed(3)} ms with`);
  t.log(`planning added: ${(((planning.declared - planning.plain) / findOne.plain) * 100).toFixed(1)} % of the findOne`);
  t.true(planning.declared - planning.plain <= findOne.plain * 0.1, 'the declarations add at most 10 % to the statement');
});
