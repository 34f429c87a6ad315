import test from 'ava';
import pg, { type QueryResult, type QueryResultRow } from 'pg';
import { documentStore, type Collection } from '../../lib/documents/index.ts';
import { DeclaredIndexPaths } from '../../lib/documents/declared-index-paths.ts';
import { useDeclaredIndexes } from '../../lib/documents/declared-paths.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { declaredPath, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import type { Statement } from '../../lib/db/statement.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';
import * as arrayPathsMigration from '../../migrations/20261126000011_document_array_paths.ts';

/**
 * Where documents hold arrays (migration `..._document_array_paths`): the database records it as
 * they are written, and a find on a declared path reads the index once while none of the tenant's
 * documents holds an array along the path, twice (the recheck) once one does, with the same
 * documents in the same order either way.
 */

const declarations: IndexDeclaration[] = [
  { project: 'p', collection: 'tickets', fields: [{ path: declaredPath('score'), direction: -1 }], unique: false },
  { project: 'p', collection: 'tickets', fields: [{ path: declaredPath('owner.name'), direction: 1 }], unique: false },
];
const quietLog = { info: () => {}, warn: () => {}, error: () => {} };

let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme', 'other']);
  await buildDeclaredIndexes(database.url, declarations, quietLog).done;
});
test.after.always(async () => {
  await database?.close();
});

/** A tenant database that keeps every statement it runs. */
class RecordingDatabase extends TenantDatabase {
  readonly recorded: Statement[] = [];

  override query<Row extends QueryResultRow>(tenant: string, statement: Statement): Promise<QueryResult<Row>> {
    this.recorded.push(statement);
    return super.query<Row>(tenant, statement);
  }
}

/** A service's view of one tenant, with its own memory of where arrays were seen: a process that just started. */
function freshProcess(tenant: string, collection: string): { items: Collection; recorded: Statement[]; close: () => Promise<void> } {
  const paths = new DeclaredIndexPaths();
  useDeclaredIndexes(
    paths,
    declarations.map((declaration) => ({ ...declaration, collection })),
  );
  const recording = new RecordingDatabase(database.url);
  return { items: documentStore(recording, tenant, paths).collection(collection), recorded: recording.recorded, close: () => recording.close() };
}

async function arrayPaths(collection: string): Promise<string[]> {
  const rows = await database.knex('document_array_paths').where({ collection }).orderBy(['tenant', 'path']).select('tenant', 'path');
  return rows.map(({ tenant, path }: { tenant: string; path: string }) => `${tenant}:${path}`);
}

/** How many reads of the documents table the statement's plan holds (index scans, sequential scans), planned as the service runs it. */
async function readsInPlan(tenant: string, statement: Statement): Promise<number> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('role', 'spaceport_tenant', true), set_config('spaceport.tenant', $1, true)", [tenant]);
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain ${statement.sql}`, [...statement.bindings]);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    return plan.match(/Scan (Backward )?(using \S+ )?on documents/g)?.length ?? 0;
  } finally {
    await client.end();
  }
}

test.serial('every write records the paths to arrays, through objects, for its own tenant only', async (t) => {
  const acme = documentStore(database.tenantDatabase, 'acme').collection('recorded');
  await acme.insertOne({ _id: 'a', tags: ['x'], owner: { name: 'Ann', roles: [['nested']] }, score: 1 });
  await acme.insertMany([{ _id: 'b', list: [] }, { _id: 'c', plain: { deep: { er: 1 } } }]);
  t.deepEqual(await arrayPaths('recorded'), ['acme:list', 'acme:owner.roles', 'acme:tags']);

  await acme.updateOne({ _id: 'c' }, { $push: { 'plain.deep.history': 1 } });
  await acme.updateOne({ _id: 'new' }, { $set: { found: { at: [1] } } }, { upsert: true });
  await documentStore(database.tenantDatabase, 'other').collection('recorded').insertOne({ _id: 'o', score: [1] });
  t.deepEqual(await arrayPaths('recorded'), ['acme:found.at', 'acme:list', 'acme:owner.roles', 'acme:plain.deep.history', 'acme:tags', 'other:score']);
});

test.serial('a find reads the declared index once until the tenant stores an array on the path, then finds that document too', async (t) => {
  const setUp = documentStore(database.tenantDatabase, 'acme').collection('once');
  await setUp.insertMany(Array.from({ length: 30 }, (_, index) => ({ _id: `t${index}`, score: index })));
  // Another tenant's arrays change nothing for this one.
  await documentStore(database.tenantDatabase, 'other').collection('once').insertOne({ _id: 'o', score: [5, 6] });

  const service = freshProcess('acme', 'once');
  t.teardown(service.close);
  const range = () => service.items.find({ score: { $gte: 5, $lt: 8 } }).sort({ score: -1 }).toArray();

  t.deepEqual((await range()).map((document) => document._id), ['t7', 't6', 't5']);
  t.is(await readsInPlan('acme', service.recorded.at(-1) as Statement), 1);

  // Written by another process: this one has not seen it.
  await setUp.insertOne({ _id: 'arr', score: [100, 6] });
  const statementsBefore = service.recorded.length;
  t.deepEqual((await range()).map((document) => document._id), ['arr', 't7', 't6', 't5']);
  t.is(service.recorded.length - statementsBefore, 2, 'the read that assumed no arrays failed and ran again with the recheck');
  t.is(await readsInPlan('acme', service.recorded.at(-1) as Statement), 2);

  // Remembered: the next find goes straight to the read with the recheck.
  t.deepEqual((await range()).map((document) => document._id), ['arr', 't7', 't6', 't5']);
  t.is(service.recorded.length - statementsBefore, 3);
  t.is(await service.items.countDocuments({ score: { $gte: 5, $lt: 8 } }), 4);
});

test.serial('an array along a dotted declared path is seen too', async (t) => {
  const setUp = documentStore(database.tenantDatabase, 'acme').collection('dotted');
  await setUp.insertMany([
    { _id: 'ann', owner: { name: 'Ann' } },
    { _id: 'bob', owner: { name: 'Bob' } },
  ]);
  const service = freshProcess('acme', 'dotted');
  t.teardown(service.close);
  const named = () => service.items.find({ 'owner.name': 'Cid' }).toArray();

  t.deepEqual(await named(), []);
  t.is(await readsInPlan('acme', service.recorded.at(-1) as Statement), 1);
  await setUp.insertOne({ _id: 'team', owner: [{ name: 'Cid' }, { name: 'Dee' }] });
  t.deepEqual((await named()).map((document) => document._id), ['team']);
  t.is(await service.items.countDocuments({ 'owner.name': 'Dee' }), 1);
});

test.serial('inside a transaction a find always rechecks, so it never fails the transaction', async (t) => {
  const setUp = documentStore(database.tenantDatabase, 'acme').collection('in-tx');
  await setUp.insertMany([
    { _id: 'n', score: 3 },
    { _id: 'a', score: [3, 4] },
  ]);
  const paths = new DeclaredIndexPaths();
  useDeclaredIndexes(
    paths,
    declarations.map((declaration) => ({ ...declaration, collection: 'in-tx' })),
  );
  const store = documentStore(database.tenantDatabase, 'acme', paths);
  const found = await store.transaction(async (tx) => {
    const matching = await tx.collection('in-tx').find({ score: 3 }).sort({ score: 1 }).toArray();
    await tx.collection('in-tx').insertOne({ _id: 'written', score: 5 });
    return matching.map((document) => document._id);
  });
  t.deepEqual(found, ['n', 'a']);
  t.truthy(await setUp.findOne({ _id: 'written' }), 'the transaction committed');
});

test.serial('the migration records the arrays of documents written before it', async (t) => {
  await database.knex.raw("insert into documents (tenant, collection, id, doc) values ('acme', 'older', 'x', ?::jsonb)", [JSON.stringify({ _id: 'x', a: { b: [1] } })]);
  await database.knex.raw("delete from document_array_paths where collection = 'older'");
  t.deepEqual(await arrayPaths('older'), []);
  await arrayPathsMigration.down(database.knex);
  await arrayPathsMigration.up(database.knex);
  t.deepEqual(await arrayPaths('older'), ['acme:a.b']);
});
