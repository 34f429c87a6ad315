import test from 'ava';
import fc from 'fast-check';
import { DocumentQueryError, documentStore, DuplicateKeyError, type Collection } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

// Bulk operations of any size work (SPEC §9): PostgreSQL takes at most 65 535 bound values in
// one statement, which a 16 384-document insertMany or a 70 000-value $in used to exceed (500).

// Serial: each test moves tens of thousands of rows; at once they only compete for the machine.
let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme', 'other']);
});
test.after.always(async () => {
  await database?.close();
});

function collection(name: string, tenant = 'acme'): Collection {
  return documentStore(database.tenantDatabase, tenant).collection(name);
}

const MANY = 16_384;

test.serial('insertMany of 16 384 documents inserts them all, in order, with their ids', async (t) => {
  const items = collection('bulk-insert');
  const documents = Array.from({ length: MANY }, (_, index) => ({ n: index, label: `item ${index}` }));
  const result = await items.insertMany(documents);
  t.is(result.insertedCount, MANY);
  t.is(Object.keys(result.insertedIds).length, MANY);
  t.is(await items.countDocuments({}), MANY);
  const last = await items.findOne({ _id: result.insertedIds[MANY - 1] });
  t.deepEqual(last, { n: MANY - 1, label: `item ${MANY - 1}`, _id: result.insertedIds[MANY - 1] });
  t.is(await collection('bulk-insert', 'other').countDocuments({}), 0, 'nothing reached another tenant');
});

test.serial('insertMany of 40 000 small documents, more rows than one INSERT … VALUES can bind, inserts them all', async (t) => {
  const items = collection('bulk-small');
  const result = await items.insertMany(Array.from({ length: 40_000 }, (_, index) => ({ _id: `s${index}` })));
  t.is(result.insertedCount, 40_000);
  t.is(await items.countDocuments({}), 40_000);
  t.deepEqual(await items.findOne({ _id: 's39999' }), { _id: 's39999' });
});

test.serial('an insertMany that fails part way inserts none of its documents', async (t) => {
  const items = collection('bulk-atomic');
  await items.insertOne({ _id: 'taken' });
  const documents = Array.from({ length: MANY }, (_, index) => ({ _id: `d${index}` }));
  documents.push({ _id: 'taken' });
  await t.throwsAsync(() => items.insertMany(documents), { instanceOf: DuplicateKeyError });
  t.is(await items.countDocuments({}), 1, 'only the document from before');
});

test.serial('$in and $nin with 70 000 values match as with a few', async (t) => {
  const items = collection('bulk-in');
  await items.insertMany(Array.from({ length: 100 }, (_, index) => ({ _id: `i${index}`, n: index, tag: `t${index}` })));
  const numbers = Array.from({ length: 70_000 }, (_, index) => index * 10);
  const tags = Array.from({ length: 70_000 }, (_, index) => `t${index * 10}`);
  const ids = Array.from({ length: 70_000 }, (_, index) => `i${index * 10}`);
  const expected = Array.from({ length: 10 }, (_, index) => index * 10);
  t.deepEqual((await items.find({ n: { $in: numbers } }).sort({ n: 1 }).toArray()).map((document) => document.n), expected);
  t.deepEqual((await items.find({ tag: { $in: tags } }).sort({ n: 1 }).toArray()).map((document) => document.n), expected);
  t.deepEqual((await items.find({ _id: { $in: ids } }).sort({ n: 1 }).toArray()).map((document) => document.n), expected);
  t.is(await items.countDocuments({ n: { $nin: numbers } }), 90);
  t.is(await items.countDocuments({ n: { $in: [...numbers, null, { a: 1 }, [1, 2]] } }), 10);
});

test.serial('updateMany and deleteMany over 20 000 documents', async (t) => {
  const items = collection('bulk-update');
  await items.insertMany(Array.from({ length: 20_000 }, (_, index) => ({ n: index })));
  const updated = await items.updateMany({}, { $set: { seen: true } });
  t.deepEqual({ matched: updated.matchedCount, modified: updated.modifiedCount }, { matched: 20_000, modified: 20_000 });
  t.is(await items.countDocuments({ seen: true }), 20_000);
  t.deepEqual(await items.deleteMany({ seen: true }), { acknowledged: true, deletedCount: 20_000 });
});

// A long $in list is matched as a set, a short one path by path with the index: both must
// match exactly what equality with each value matches, arrays (nested too) and objects included.
const PADDING = Array.from({ length: 150 }, (_, index) => `padding-${index}`);
const scalar = fc.constantFrom(0, 1, 1.5, 'a', 'b', '1', true, false, null);
const nested = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('value'), { maxLength: 3 }), fc.record({ b: tie('value') })),
})).value;
const fieldDocuments = fc.uniqueArray(fc.record({ _id: fc.constantFrom('d0', 'd1', 'd2', 'd3', 'd4', 'd5'), f: nested }), { maxLength: 6, selector: (document) => document._id });

test.serial('a long $in or $nin list matches exactly what the same short list matches, and what equality with each value matches', async (t) => {
  let round = 0;
  await fc.assert(
    fc.asyncProperty(fieldDocuments, fc.constantFrom('f', 'f.b'), fc.array(scalar, { minLength: 1, maxLength: 4 }), async (documents, field, values) => {
      const items = collection(`in-lists-${round++}`);
      if (documents.length > 0) await items.insertMany(documents);
      const idsOf = async (filter: Record<string, unknown>) => (await items.find(filter).sort({ _id: 1 }).toArray()).map((document) => document._id);
      const short = await idsOf({ [field]: { $in: values } });
      t.deepEqual(await idsOf({ [field]: { $in: [...values, ...PADDING] } }), short, 'long $in');
      t.deepEqual(await idsOf({ $or: values.map((one) => ({ [field]: one })) }), short, 'equality with each value');
      t.deepEqual(await idsOf({ [field]: { $nin: [...values, ...PADDING] } }), await idsOf({ [field]: { $nin: values } }), 'long $nin');
    }),
    { numRuns: 150 },
  );
});

test.serial('a filter of more separate conditions than PostgreSQL can bind is refused with a clear error, not a database failure', async (t) => {
  const items = collection('bulk-or');
  const filter = { $or: Array.from({ length: 70_000 }, (_, index) => ({ n: index })) };
  await t.throwsAsync(() => items.countDocuments(filter), { instanceOf: DocumentQueryError, message: /at most 1000 filter conditions .*has 70001$/ });
});
