import test from 'ava';
import type { QueryResult, QueryResultRow } from 'pg';
import { documentStore, type Collection } from '../../lib/documents/index.ts';
import { DeclaredIndexPaths } from '../../lib/documents/declared-index-paths.ts';
import { useDeclaredIndexes } from '../../lib/documents/declared-paths.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { declaredPath, indexNames, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import type { Statement } from '../../lib/db/statement.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

/** The declared paths, as a service's runtime holds them once its projects are mounted. */
const declared = new DeclaredIndexPaths();

let database: MigratedDatabase;
const SIZE = 100_000;

const declarations: IndexDeclaration[] = [
  { project: 'shop', collection: 'items', fields: [{ path: declaredPath('score'), direction: 1 }], unique: false },
  { project: 'shop', collection: 'items', fields: [{ path: declaredPath('info.name'), direction: -1 }], unique: false },
];

const quietLog = { info: () => {}, warn: () => {}, error: () => {} };

test.before(async () => {
  database = await migratedDatabase(['acme', 'other']);
  for (const tenant of ['acme', 'other']) {
    await database.knex.raw(
      `insert into documents (tenant, collection, id, doc)
       select ?, 'items', 'id-' || n, jsonb_build_object('_id', 'id-' || n, 'score', n, 'info', jsonb_build_object('name', 'name-' || lpad(n::text, 6, '0')))
       from generate_series(1, ?) as n`,
      [tenant, SIZE],
    );
  }
  const built = await buildDeclaredIndexes(database.url, declarations, quietLog).done;
  if (built.some(({ outcome }) => outcome !== 'built')) throw new Error(`indexes not built: ${JSON.stringify(built)}`);
  await database.knex.raw('vacuum analyze documents');
  useDeclaredIndexes(declared, declarations);
});
test.after.always(async () => {
  await database?.close();
});

/** A tenant database that keeps the first statement it runs, with the declared paths of the service's. */
class RecordingDatabase extends TenantDatabase {
  recorded: Statement | undefined;

  override query<Row extends QueryResultRow>(tenant: string, statement: Statement): Promise<QueryResult<Row>> {
    this.recorded ??= statement;
    return super.query<Row>(tenant, statement);
  }
}

/** The plan of the statement an operation sends, run as the service runs it: restricted role, row-level security, one tenant. */
async function planOf(tenant: string, operation: (items: Collection) => Promise<unknown>): Promise<string> {
  const recording = new RecordingDatabase(database.url);
  try {
    await operation(documentStore(recording, tenant, declared).collection('items'));
    const statement = recording.recorded;
    if (statement === undefined) throw new Error('no statement ran');
    const { rows } = await recording.query<{ 'QUERY PLAN': string }>(tenant, { sql: `explain (analyze, costs off) ${statement.sql}`, bindings: statement.bindings });
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await recording.close();
  }
}

const items = (tenant = 'acme') => documentStore(database.tenantDatabase, tenant, declared).collection('items');
const [score, name] = declarations.map((declaration) => indexNames(declaration).query);

test.serial('an equality filter on a declared path uses its index under row-level security', async (t) => {
  const plan = await planOf('acme', (found) => found.find({ score: 4321 }).toArray());
  t.log(plan);
  t.regex(plan, new RegExp(`Index Scan on ${score}|Index Scan using ${score}`));
  t.notRegex(plan, /Seq Scan/);
  t.deepEqual((await items().find({ score: 4321 }).toArray()).map((found) => found._id), ['id-4321']);
});

test.serial('a cursor explains its find without running it: the plan and the declared index it reads (issue 37, point 6)', async (t) => {
  const explained = await items().find({ score: 4321 }).explain();
  t.deepEqual(explained.indexes, [score]);
  t.truthy((explained.plan as { Plan?: unknown }).Plan, "PostgreSQL's plan, as EXPLAIN (FORMAT JSON) gives it");
  t.deepEqual((await items().find({ unindexed: 4321 }).explain()).indexes.includes(score as string), false);
  const sorted = await items().find({ score: { $gte: 5000 } }).sort({ score: -1 }).limit(5).project({ score: 1 }).explain();
  t.deepEqual(sorted.indexes, [score]);
});

test.serial('a range filter with a sort on a declared path uses its index, and answers in order', async (t) => {
  const plan = await planOf('acme', (found) => found.find({ score: { $gte: 5000, $lt: 5100 } }).sort({ score: -1 }).limit(5).toArray());
  t.log(plan);
  t.regex(plan, new RegExp(score));
  t.notRegex(plan, /Seq Scan/);
  const found = await items().find({ score: { $gte: 5000, $lt: 5100 } }).sort({ score: -1 }).limit(5).toArray();
  t.deepEqual(found.map((document) => document.score), [5099, 5098, 5097, 5096, 5095]);
});

// Sorted against the declared direction (the index's `id` runs the other way), the matches are
// read from the index and sorted: without statistics on the keys (declared-planning.heavy.test.ts
// says why there are none) the planner does not know they are few or many.
test.serial('a range at the far end of the sort order reads only the entries that match, not every entry before it', async (t) => {
  const plan = await planOf('acme', (found) => found.find({ score: { $lt: 1000 } }).sort({ score: -1 }).skip(2).limit(5).toArray());
  t.log(plan);
  const scans = plan.split('\n').filter((line) => new RegExp(`Index Scan (Backward )?using ${score}`).test(line));
  t.true(scans.length > 0);
  for (const scan of scans) t.true(Number(/rows=([\d.]+) loops/.exec(scan)?.[1]) < 1000, scan);
  t.notRegex(plan, /Seq Scan/);
  const found = await items().find({ score: { $lt: 1000 } }).sort({ score: -1 }).skip(2).limit(5).toArray();
  t.deepEqual(found.map((document) => document.score), [997, 996, 995, 994, 993]);
});

test.serial('a wide range sorted in the declared direction reads one page in order, whatever the planner estimates', async (t) => {
  const plan = await planOf('acme', (found) => found.find({ score: { $gt: 10 } }).sort({ score: 1 }).limit(5).toArray());
  t.log(plan);
  const scans = plan.split('\n').filter((line) => new RegExp(`Index Scan using ${score}`).test(line));
  t.true(scans.length > 0);
  for (const scan of scans) t.true(Number(/rows=([\d.]+) loops/.exec(scan)?.[1]) <= 10, scan);
  t.notRegex(plan, /Seq Scan|Sort Method/);
});

test.serial('a sort on a declared path reads its index in order instead of sorting the collection', async (t) => {
  const plan = await planOf('acme', (found) => found.find().sort({ score: 1 }).limit(3).toArray());
  t.log(plan);
  t.regex(plan, new RegExp(`Index Scan using ${score}`));
  t.notRegex(plan, /Seq Scan|Sort Method: (external|top-N)/);
  t.deepEqual((await items().find().sort({ score: 1 }).limit(3).toArray()).map((document) => document.score), [1, 2, 3]);
});

test.serial('a dotted declared path serves string ranges and $in', async (t) => {
  const plan = await planOf('acme', (found) => found.find({ 'info.name': { $gt: 'name-099990' } }).sort({ 'info.name': -1 }).toArray());
  t.log(plan);
  t.regex(plan, new RegExp(name));
  t.notRegex(plan, /Seq Scan/);
  const found = await items().find({ 'info.name': { $gt: 'name-099997' } }).sort({ 'info.name': -1 }).toArray();
  t.deepEqual(found.map((document) => document._id), ['id-100000', 'id-99999', 'id-99998']);
  const listed = await planOf('acme', (found) => found.find({ 'info.name': { $in: ['name-000007', 'name-000077'] } }).toArray());
  t.regex(listed, new RegExp(name));
  t.notRegex(listed, /Seq Scan/);
});

test.serial('the tenant condition holds on the indexed paths', async (t) => {
  await items('other').insertOne({ _id: 'only-other', score: -5 });
  t.is(await items('acme').countDocuments({ score: -5 }), 0);
  t.is(await items('other').countDocuments({ score: { $lt: 0 } }), 1);
  await items('other').deleteOne({ _id: 'only-other' });
});

test.serial('equality on a path without a declared index keeps the GIN index', async (t) => {
  const plan = await planOf('acme', (found) => found.find({ color: 'red' }).toArray());
  t.regex(plan, /documents_doc_gin/);
});
