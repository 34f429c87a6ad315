import test from 'ava';
import fc from 'fast-check';
import { documentStore, type FindCursor } from '../../lib/documents/index.ts';
import { DeclaredIndexPaths } from '../../lib/core/runtime.ts';
import { useDeclaredIndexes } from '../../lib/documents/declared-paths.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { declaredPath, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

/** The declared paths, as a service's runtime holds them once its projects are mounted. */
const declared = new DeclaredIndexPaths();

/**
 * A declared index changes how a filter or sort is written, never what it answers: over documents
 * whose declared paths hold every type (numbers, strings, booleans, null, missing, arrays, objects,
 * arrays along a dotted path), the same finds answer the same documents in the same order with
 * the declaration and without it.
 */
const RUNS = 150;

const declarations: IndexDeclaration[] = [
  { project: 'p', collection: 'mixed', fields: [{ path: declaredPath('v'), direction: 1 }], unique: false },
  { project: 'p', collection: 'mixed', fields: [{ path: declaredPath('a.b'), direction: -1 }], unique: false },
];

let database: MigratedDatabase;
/** The same database without the declaration: the unindexed SQL. */
let plain: TenantDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme']);
  await buildDeclaredIndexes(database.url, declarations, { info: () => {}, warn: () => {}, error: () => {} }).done;
  useDeclaredIndexes(declared, declarations);
  plain = new TenantDatabase(database.url);
});
test.after.always(async () => {
  await plain?.close();
  await database?.close();
});

const scalar = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -1.5, 2.0, 10, 1e20),
  fc.constantFrom('', 'a', 'b', 'B', 'ab', 'é', '10', '2', 'z'),
  fc.boolean(),
);
const value = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.record({ x: scalar }) },
);
const aField = fc.oneof(
  { weight: 4, arbitrary: fc.record({ b: value }, { requiredKeys: [] }) },
  { weight: 2, arbitrary: fc.array(fc.record({ b: value }, { requiredKeys: [] }), { maxLength: 3 }) },
  { weight: 1, arbitrary: scalar },
);
const document = fc.record({ v: value, a: aField }, { requiredKeys: [] });

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

test.serial(`finds answer the same with and without the declared indexes (${RUNS} runs)`, async (t) => {
  const indexed = documentStore(database.tenantDatabase, 'acme', declared).collection('mixed');
  const unindexed = documentStore(plain, 'acme').collection('mixed');
  await fc.assert(
    fc.asyncProperty(fc.array(document, { maxLength: 25 }), fc.array(fc.tuple(filter, sort, page), { minLength: 1, maxLength: 4 }), async (documents, queries) => {
      await indexed.deleteMany({});
      if (documents.length > 0) await indexed.insertMany(documents.map((fields, index) => ({ _id: `d${String(index).padStart(2, '0')}`, ...fields })));
      for (const [where, order, { skip, limit }] of queries) {
        const read = (cursor: FindCursor) => {
          const paged = skip === undefined ? cursor : cursor.skip(skip);
          return (limit === undefined ? paged : paged.limit(limit)).toArray();
        };
        const expected = await read(unindexed.find(where).sort(order ?? {}));
        const found = await read(indexed.find(where).sort(order ?? {}));
        t.deepEqual(found.map(({ _id }) => _id), expected.map(({ _id }) => _id), JSON.stringify({ where, order, skip, limit }));
        t.is(await indexed.countDocuments(where), await unindexed.countDocuments(where));
      }
    }),
    { numRuns: RUNS },
  );
});
