import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { documentStore, DocumentQueryError, type Collection, type UpdateSpec } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

/**
 * What `document_array_paths` holds (migration `..._document_array_paths`) equals a plain
 * JavaScript reading of the documents written: for each tenant, every path from a document's top,
 * through objects, to an array, never inside one, along keys a declared path may hold, for every
 * version of every document its inserts and updates wrote (a path is never forgotten). Keys are
 * whatever the store accepts: dots, empty, `$`, unicode, quotes and braces, `constructor`,
 * `prototype`, `toString`; only `__proto__` is refused (keys.ts), and a document holding it
 * records nothing.
 */
const RUNS = 100;
const COLLECTION = 'shapes';

let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme', 'other']);
});
test.after.always(async () => {
  await database?.close();
});

/** A key a declared path may hold (lib/documents/index-keys.ts): only such paths are recorded. */
const DECLARABLE_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;
const MAX_DECLARED_DEPTH = 16;

/** Each path to an array along keys a declared path may hold, at most as deep, dotted. */
function pathsToArrays(value: unknown, above: readonly string[] = []): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || above.length >= MAX_DECLARED_DEPTH) return [];
  return Object.entries(value)
    .filter(([key]) => DECLARABLE_KEY.test(key))
    .flatMap(([key, inner]) => (Array.isArray(inner) ? [[...above, key].join('.')] : pathsToArrays(inner, [...above, key])));
}

function sortedSet(paths: Iterable<string>): string[] {
  return [...new Set(paths)].sort();
}

/** The tenant's rows as the service reads them: row-level security alone keeps other tenants' out. */
async function recordedFor(tenant: string): Promise<string[]> {
  const { rows } = await database.tenantDatabase.query<{ path: string }>(tenant, { sql: 'select path from document_array_paths where collection = $1', bindings: [COLLECTION] });
  return sortedSet(rows.map(({ path }) => path));
}

/** Every tenant's rows, read by the owner, grouped by their tenant column. */
async function recordedByTenant(): Promise<Record<string, string[]>> {
  const rows: Array<{ tenant: string; path: string }> = await database.knex('document_array_paths').where({ collection: COLLECTION }).select('tenant', 'path');
  const tenants = sortedSet(rows.map(({ tenant }) => tenant));
  return Object.fromEntries(tenants.map((tenant) => [tenant, sortedSet(rows.filter((row) => row.tenant === tenant).map(({ path }) => path))]));
}

/** Segments of an update's dotted path: `parsePath` refuses empty ones and a leading `$`. */
const segment = fc.constantFrom('a', 'b', 'tags', 'é', '日本', 'constructor', 'prototype', '0', 'q"uote', '{x,y}');
const key = fc.oneof(
  { weight: 4, arbitrary: segment },
  { weight: 2, arbitrary: fc.constantFrom('a.b', '.', '', '$x', 'NULL', 'back\\slash', ' ', '😀', 'toString', '__proto') },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }).filter((text) => text !== '__proto__' && !text.includes('\u0000')) },
);
const scalar = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('', 'x', 'é'), fc.boolean(), fc.constant(null));
const { json } = fc.letrec<{ json: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  json: fc.oneof({ depthSize: 'small' }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('json'), { maxLength: 3 }),
  object: fc.dictionary(key, tie('json'), { maxKeys: 3 }),
}));
const fields = fc.dictionary(
  key.filter((name) => name !== '_id'),
  json,
  { maxKeys: 4 },
);

const update = fc.record({
  target: fc.nat({ max: 5 }),
  operator: fc.constantFrom('$set', '$push'),
  path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((keys) => keys.join('.')),
  value: json,
  upsert: fc.boolean(),
});
type Update = typeof update extends fc.Arbitrary<infer Generated> ? Generated : never;

/** Applies each update to one document, and answers each document as the update left it; an update the store refuses (a path through a scalar, `$push` on a non-array) leaves it as it was. */
async function applyUpdates(collection: Collection, updates: readonly Update[]): Promise<unknown[]> {
  const written: unknown[] = [];
  for (const { target, operator, path, value, upsert } of updates) {
    const _id = `d${target}`;
    await collection.updateOne({ _id }, { [operator]: { [path]: value } } as UpdateSpec, { upsert }).catch((error: unknown) => {
      if (!(error instanceof DocumentQueryError)) throw error;
    });
    written.push(await collection.findOne({ _id }));
  }
  return written;
}

function withoutEmpty(byTenant: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(byTenant).filter(([, paths]) => paths.length > 0));
}

async function emptyCollection(): Promise<void> {
  await database.knex('documents').where({ collection: COLLECTION }).delete();
  await database.knex('document_array_paths').where({ collection: COLLECTION }).delete();
}

test.serial(`the recorded paths are every path to an array of what each tenant wrote (${RUNS} runs)`, async (t) => {
  const acme = documentStore(database.tenantDatabase, 'acme').collection(COLLECTION);
  const other = documentStore(database.tenantDatabase, 'other').collection(COLLECTION);
  let runsWhereUpdatesAddedPaths = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fields, { maxLength: 5 }), fc.array(fields, { maxLength: 3 }), fc.array(update, { maxLength: 4 }), async (acmeDocuments, otherDocuments, updates) => {
      await emptyCollection();
      const inserted = acmeDocuments.map((document, index) => ({ ...document, _id: `d${index}` }));
      if (inserted.length > 0) await acme.insertMany(inserted);
      if (otherDocuments.length > 0) await other.insertMany(otherDocuments.map((document, index) => ({ ...document, _id: `o${index}` })));
      const expectedOther = sortedSet(otherDocuments.flatMap((document) => pathsToArrays(document)));
      const expectedInserted = sortedSet(inserted.flatMap((document) => pathsToArrays(document)));
      assert.deepEqual(await recordedFor('acme'), expectedInserted, 'after the inserts');

      const updated = await applyUpdates(acme, updates);
      const expectedAcme = sortedSet([...inserted, ...updated].flatMap((document) => pathsToArrays(document)));
      assert.deepEqual(await recordedFor('acme'), expectedAcme, 'after the updates');
      if (expectedAcme.length > expectedInserted.length) runsWhereUpdatesAddedPaths += 1;
      assert.deepEqual(await recordedFor('other'), expectedOther, "the other tenant's, as it reads them");
      assert.deepEqual(await recordedByTenant(), withoutEmpty({ acme: expectedAcme, other: expectedOther }), "each tenant's, as the owner reads them");
    }),
    { numRuns: RUNS, includeErrorInReport: true },
  );
  t.true(runsWhereUpdatesAddedPaths >= RUNS / 10, `runs where updates wrote arrays at new paths: ${runsWhereUpdatesAddedPaths}`);
});

test.serial('a document the store refuses, for a "__proto__" key however deep, records nothing', async (t) => {
  await emptyCollection();
  const acme = documentStore(database.tenantDatabase, 'acme').collection(COLLECTION);
  const refused = JSON.parse('{"_id": "p", "list": [], "deep": {"items": [{"__proto__": {"polluted": [1]}}]}}') as Record<string, unknown>;
  await t.throwsAsync(acme.insertMany([{ _id: 'fine', tags: ['x'] }, refused]), { instanceOf: DocumentQueryError });
  await acme.insertOne({ _id: 'q', in: { place: [] } });
  await t.throwsAsync(acme.updateOne({ _id: 'q' }, { $set: { 'in.other': [1], later: { list: [JSON.parse('{"__proto__": []}')] } } }), { instanceOf: DocumentQueryError });
  t.deepEqual(await recordedByTenant(), { acme: ['in.place'] });
});
