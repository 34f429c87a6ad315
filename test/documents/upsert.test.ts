import test from 'ava';
import { DocumentQueryError, DuplicateKeyError, documentStore, type Collection } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

// `{upsert: true}` on updateOne and updateMany: when nothing matches, one document is inserted,
// made of the filter's equality fields with the update applied, in the same statement.

let database: MigratedDatabase;
let counter = 0;

test.before(async () => {
  database = await migratedDatabase(['acme', 'globex']);
});
test.after.always(async () => {
  await database?.close();
});

function fresh(tenant = 'acme'): Collection {
  counter += 1;
  return documentStore(database.tenantDatabase, tenant).collection(`upserts-${counter}`);
}

test('updateOne with upsert inserts the filter’s equality fields, then applies the update', async (t) => {
  const counters = fresh();
  const result = await counters.updateOne(
    { name: 'tickets', 'scope.team': 'blue', kind: { $eq: 'seq' }, size: { $gt: 3 }, $and: [{ region: 'eu' }] },
    { $inc: { next: 1 }, $push: { log: 'made' } },
    { upsert: true },
  );
  t.is(result.matchedCount, 0);
  t.is(result.modifiedCount, 0);
  t.is(result.upsertedCount, 1);
  t.regex(result.upsertedId as string, /^[0-9a-f]{24}$/);
  t.deepEqual(await counters.find().toArray(), [
    { _id: result.upsertedId, name: 'tickets', scope: { team: 'blue' }, kind: 'seq', region: 'eu', next: 1, log: ['made'] },
  ]);
  const again = await counters.updateOne({ name: 'tickets', 'scope.team': 'blue' }, { $inc: { next: 1 } }, { upsert: true });
  t.deepEqual(again, { acknowledged: true, matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null });
  t.like(await counters.findOne({}), { next: 2 });
  t.is(await counters.countDocuments(), 1);
});

test('the upserted document takes the filter’s _id, or the one $set gives', async (t) => {
  const things = fresh();
  t.like(await things.updateOne({ _id: 'given' }, { $set: { a: 1 } }, { upsert: true }), { upsertedId: 'given' });
  t.like(await things.updateMany({ k: 1 }, { $set: { _id: 'from-set' } }, { upsert: true }), { upsertedId: 'from-set' });
  t.deepEqual(await things.find().sort({ _id: 1 }).toArray(), [{ _id: 'from-set', k: 1 }, { _id: 'given', a: 1 }]);
});

test('updateMany with upsert updates every match when some match, and inserts one when none does', async (t) => {
  const things = fresh();
  await things.insertMany([{ kind: 'a' }, { kind: 'a' }]);
  t.like(await things.updateMany({ kind: 'a' }, { $set: { seen: true } }, { upsert: true }), { matchedCount: 2, modifiedCount: 2, upsertedCount: 0 });
  t.like(await things.updateMany({ kind: 'b' }, { $set: { seen: true } }, { upsert: true }), { matchedCount: 0, upsertedCount: 1 });
  t.is(await things.countDocuments({ seen: true }), 3);
});

test('an upsert whose update cannot apply to the new document is an error, and inserts nothing', async (t) => {
  const things = fresh();
  await t.throwsAsync(things.updateOne({ tags: 'x' }, { $push: { tags: 'y' } }, { upsert: true }), { instanceOf: DocumentQueryError, message: /\$push: "tags" holds a string/ });
  await t.throwsAsync(things.updateOne({ a: 1, 'a.b': 2 }, { $set: { c: 1 } }, { upsert: true }), { instanceOf: DocumentQueryError });
  t.is(await things.countDocuments(), 0);
});

test('when a document matches, the new document an upsert would insert is never computed', async (t) => {
  const things = fresh();
  await things.insertOne({ _id: 'a', tags: ['x'] });
  // Applied to the filter's {tags: 'x'}, $push would be refused: it applies to the match instead.
  t.like(await things.updateOne({ tags: 'x' }, { $push: { tags: 'y' } }, { upsert: true }), { matchedCount: 1, modifiedCount: 1, upsertedCount: 0 });
  t.deepEqual(await things.find().toArray(), [{ _id: 'a', tags: ['x', 'y'] }]);
});

test('an upsert is an insert of the request’s tenant, and never matches another tenant’s document', async (t) => {
  const acme = fresh('acme');
  const globex = documentStore(database.tenantDatabase, 'globex').collection(acme.collectionName);
  await globex.insertOne({ _id: 'shared', owner: 'globex' });
  t.like(await acme.updateOne({ _id: 'shared' }, { $set: { owner: 'acme' } }, { upsert: true }), { matchedCount: 0, upsertedId: 'shared' });
  t.deepEqual(await globex.find().toArray(), [{ _id: 'shared', owner: 'globex' }]);
  t.deepEqual(await acme.find().toArray(), [{ _id: 'shared', owner: 'acme' }]);
  const rows = await database.knex('documents').where({ collection: acme.collectionName }).orderBy('tenant').select('tenant', 'doc');
  t.deepEqual(rows, [{ tenant: 'acme', doc: { _id: 'shared', owner: 'acme' } }, { tenant: 'globex', doc: { _id: 'shared', owner: 'globex' } }]);
});

test('concurrent upserts of one _id: one inserts, the others find it and update it', async (t) => {
  const counters = fresh();
  const results = await Promise.all(Array.from({ length: 20 }, () => counters.updateOne({ _id: 'hits' }, { $inc: { n: 1 } }, { upsert: true })));
  t.is(results.filter((result) => result.upsertedCount === 1).length, 1);
  t.is(results.filter((result) => result.matchedCount === 1).length, 19);
  t.deepEqual(await counters.find().toArray(), [{ _id: 'hits', n: 20 }]);
});

test('concurrent upserts of a filter without _id may insert more than one document, as in MongoDB without a unique index', async (t) => {
  const counters = fresh();
  const results = await Promise.all(Array.from({ length: 10 }, () => counters.updateOne({ name: 'hits' }, { $inc: { n: 1 } }, { upsert: true })));
  const inserted = results.filter((result) => result.upsertedCount === 1).length;
  t.true(inserted >= 1);
  // Whatever the interleaving, no increment is lost: they are spread over the documents made.
  const documents = await counters.find().toArray();
  t.is(documents.length, inserted);
  t.is(documents.reduce((sum, document) => sum + (document.n as number), 0), 10);
});

test('an upsert whose _id belongs to a document the filter does not match is a duplicate key', async (t) => {
  const things = fresh();
  await things.insertOne({ _id: 'x', state: 'closed' });
  await t.throwsAsync(things.updateOne({ _id: 'x', state: 'open' }, { $set: { n: 1 } }, { upsert: true }), { instanceOf: DuplicateKeyError });
  t.deepEqual(await things.find().toArray(), [{ _id: 'x', state: 'closed' }]);
});

test('options are checked: an unknown one is an error naming it (upsert was once ignored)', async (t) => {
  const things = fresh();
  await things.insertOne({ _id: 'a' });
  await t.throwsAsync(things.updateOne({}, { $set: { n: 1 } }, { upsert: true, multi: true } as never), { instanceOf: DocumentQueryError, message: 'updateOne: unknown option "multi" (it takes upsert)' });
  await t.throwsAsync(things.updateMany({}, { $set: { n: 1 } }, { upsert: 'yes' } as never), { instanceOf: DocumentQueryError, message: /option "upsert" must be true or false/ });
  await t.throwsAsync(things.updateMany({}, { $set: { n: 1 } }, 'upsert' as never), { instanceOf: DocumentQueryError, message: /options must be a plain object/ });
  t.deepEqual(await things.find().toArray(), [{ _id: 'a' }]);
});

test('concurrent upserts on a unique key other than _id (an account’s username): one inserts, the others update it', async (t) => {
  counter += 1;
  const accounts = documentStore(database.tenantDatabase, 'acme').collection('accounts');
  const username = `racer-${counter}`;
  const results = await Promise.all(Array.from({ length: 10 }, () => accounts.updateOne({ username }, { $inc: { logins: 1 } }, { upsert: true })));
  t.is(results.filter((result) => result.upsertedCount === 1).length, 1);
  t.deepEqual((await accounts.find({ username }).toArray()).map(({ logins }) => logins), [10]);
});
