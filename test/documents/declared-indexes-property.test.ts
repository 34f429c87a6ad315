import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import type { QueryResult, QueryResultRow } from 'pg';
import { documentStore, type Collection, type FindCursor } from '../../lib/documents/index.ts';
import { DeclaredIndexPaths } from '../../lib/documents/declared-index-paths.ts';
import { useDeclaredIndexes } from '../../lib/documents/declared-paths.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { declaredPath, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import type { Statement } from '../../lib/db/statement.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, type MigratedDatabase, testTenantDatabase } from '../helpers/database.ts';

/**
 * A declared index changes how a filter or sort is written, never what it answers: over documents
 * whose declared paths hold every type (numbers, strings, booleans, null, missing, arrays, objects,
 * arrays along a dotted path), the same finds answer the same documents in the same order with
 * the declaration and without it. Each run is a process that just started, over a collection
 * where no array was ever recorded: its first finds read the index once, assuming no arrays, and
 * the documents written after them may bring arrays it has not seen.
 */
const RUNS = 150;

const declarations: IndexDeclaration[] = [
  { project: 'p', collection: 'mixed', fields: [{ path: declaredPath('v'), direction: 1 }], unique: false },
  { project: 'p', collection: 'mixed', fields: [{ path: declaredPath('a.b'), direction: -1 }], unique: false },
];

/** The service's view, counting the reads that assumed no arrays: answered, or refused because arrays were there. */
class GuardCountingDatabase extends TenantDatabase {
  guardedAnswered = 0;
  guardedRefused = 0;

  override async query<Row extends QueryResultRow>(tenant: string, statement: Statement): Promise<QueryResult<Row>> {
    if (!statement.sql.includes('documents_no_arrays_at')) return super.query<Row>(tenant, statement);
    try {
      const result = await super.query<Row>(tenant, statement);
      this.guardedAnswered += 1;
      return result;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SPD02') this.guardedRefused += 1;
      throw error;
    }
  }
}

let database: MigratedDatabase;
/** The same database without the declaration: the unindexed SQL. */
let plain: TenantDatabase;
let service: GuardCountingDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme']);
  await buildDeclaredIndexes(database.url, declarations, { info: () => {}, warn: () => {}, error: () => {} }).done;
  plain = testTenantDatabase(database.url);
  service = new GuardCountingDatabase(database.url);
});
test.after.always(async () => {
  await service?.close();
  await plain?.close();
  await database?.close();
});

/** The collection as a process that just started sees it: the declared paths, no array seen yet. */
function freshProcess(): Collection {
  const declared = new DeclaredIndexPaths();
  useDeclaredIndexes(declared, declarations);
  return documentStore(service, 'acme', declared).collection('mixed');
}

/** No document left, so no array: the owner may forget the paths recorded (rows are never deleted otherwise). */
async function emptyCollection(collection: Collection): Promise<void> {
  await collection.deleteMany({});
  await database.knex('document_array_paths').where({ tenant: 'acme', collection: 'mixed' }).delete();
}

const scalar = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -1.5, 2.0, 10, 1e20),
  fc.constantFrom('', 'a', 'b', 'B', 'ab', 'é', '10', '2', 'z'),
  fc.boolean(),
);
const valueWithoutArrays = fc.oneof({ weight: 6, arbitrary: scalar }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({ x: scalar }) });
const value = fc.oneof({ weight: 8, arbitrary: valueWithoutArrays }, { weight: 2, arbitrary: fc.array(scalar, { maxLength: 3 }) });
const aField = fc.oneof(
  { weight: 4, arbitrary: fc.record({ b: value }, { requiredKeys: [] }) },
  { weight: 2, arbitrary: fc.array(fc.record({ b: value }, { requiredKeys: [] }), { maxLength: 3 }) },
  { weight: 1, arbitrary: scalar },
);
const document = fc.record({ v: value, a: aField }, { requiredKeys: [] });
/** Documents as a collection holds them before its first array. */
const documentWithoutArrays = fc.record({ v: valueWithoutArrays, a: fc.oneof(fc.record({ b: valueWithoutArrays }, { requiredKeys: [] }), scalar) }, { requiredKeys: [] });

const operand = fc.oneof(scalar, fc.constant(null));
const condition = fc.oneof(
  operand,
  fc.record({ $eq: operand }),
  fc.dictionary(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), scalar, { minKeys: 1, maxKeys: 2 }),
  fc.record({ $in: fc.array(operand, { minLength: 1, maxLength: 3 }) }),
  fc.record({ $ne: operand }),
);
const filter = fc.dictionary(fc.constantFrom('v', 'a.b'), condition, { maxKeys: 2 });
const page = fc.record({ skip: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }), limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }) });
const sort = fc.option(fc.dictionary(fc.constantFrom('v', 'a.b'), fc.constantFrom(1, -1), { minKeys: 1, maxKeys: 2 }), { nil: undefined });

const query = fc.tuple(filter, sort, page);
type Query = typeof query extends fc.Arbitrary<infer Generated> ? Generated : never;
/** The documents written before the first finds: half the runs hold no array yet, so those finds read the index once. */
const firstDocuments = fc.oneof(fc.array(document, { maxLength: 12 }), fc.array(documentWithoutArrays, { maxLength: 12 }));

function withIds(documents: object[], from: number): Array<Record<string, unknown>> {
  return documents.map((fields, index) => ({ _id: `d${String(from + index).padStart(2, '0')}`, ...fields }));
}

/** Throws, naming the query, unless both collections answer each query with the same documents in the same order, and count alike. */
async function sameAnswers(indexed: Collection, unindexed: Collection, queries: readonly Query[]): Promise<void> {
  for (const [where, order, { skip, limit }] of queries) {
    const read = (cursor: FindCursor) => {
      const paged = skip === undefined ? cursor : cursor.skip(skip);
      return (limit === undefined ? paged : paged.limit(limit)).toArray();
    };
    const expected = await read(unindexed.find(where).sort(order ?? {}));
    const found = await read(indexed.find(where).sort(order ?? {}));
    const asked = JSON.stringify({ where, order, skip, limit });
    assert.deepEqual(found.map(({ _id }) => _id), expected.map(({ _id }) => _id), asked);
    assert.equal(await indexed.countDocuments(where), await unindexed.countDocuments(where), `count of ${asked}`);
  }
}

// A counter-example of a `make test` run: each bound is met by another element of the array, and
// for a scalar the bounds of two types contradict each other, which PostgreSQL proved while
// planning, so the one-time no-arrays check of a read that assumed no arrays never ran.
test.serial('bounds of two types on a path, after a read that assumed no arrays: an array meeting each bound with another element is found', async (t) => {
  const indexed = freshProcess();
  await emptyCollection(indexed);
  t.deepEqual(await indexed.find({}).toArray(), []);
  await indexed.insertOne({ _id: 'd00', v: '', a: [{ b: 2 }, { b: '' }] });
  const where = { 'a.b': { $gt: 0.5, $gte: '' } };
  const unindexed = documentStore(plain, 'acme').collection('mixed');
  t.deepEqual((await unindexed.find(where).toArray()).map(({ _id }) => _id), ['d00'], 'without the declaration');
  t.deepEqual((await indexed.find(where).toArray()).map(({ _id }) => _id), ['d00'], 'with the declaration');
  t.is(await indexed.countDocuments(where), 1);
});

test.serial(`finds answer the same with and without the declared indexes (${RUNS} runs)`, async (t) => {
  const unindexed = documentStore(plain, 'acme').collection('mixed');
  let arraysAppearedAfterGuardedFinds = 0;
  await fc.assert(
    fc.asyncProperty(firstDocuments, fc.array(query, { minLength: 1, maxLength: 2 }), fc.array(document, { maxLength: 12 }), fc.array(query, { minLength: 1, maxLength: 2 }), async (first, queriesBefore, later, queriesAfter) => {
      const indexed = freshProcess();
      await emptyCollection(indexed);
      if (first.length > 0) await indexed.insertMany(withIds(first, 0));
      const { guardedAnswered, guardedRefused } = service;
      await sameAnswers(indexed, unindexed, queriesBefore);
      const answeredBefore = service.guardedAnswered > guardedAnswered && service.guardedRefused === guardedRefused;
      if (later.length > 0) await indexed.insertMany(withIds(later, first.length));
      await sameAnswers(indexed, unindexed, queriesAfter);
      if (answeredBefore && service.guardedRefused > guardedRefused) arraysAppearedAfterGuardedFinds += 1;
    }),
    { numRuns: RUNS, includeErrorInReport: true },
  );
  // Both reads were exercised: the single one that assumes no arrays, and its refusal when arrays appeared after it.
  // The second depends on what was generated (3 to 12 runs of 150 seen): at least one, the test above being its fixed case.
  t.log(`reads that assumed no arrays and answered: ${service.guardedAnswered}; runs where arrays appeared after such reads: ${arraysAppearedAfterGuardedFinds}`);
  t.true(service.guardedAnswered >= RUNS / 2, `reads that assumed no arrays and answered: ${service.guardedAnswered}`);
  t.true(arraysAppearedAfterGuardedFinds >= 1, `runs where arrays appeared after such reads: ${arraysAppearedAfterGuardedFinds}`);
});
