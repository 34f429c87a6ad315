import test from 'ava';
import { DocumentQueryError, documentStore, type Collection, type Document } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

// findOneAndUpdate: one statement that picks, locks, updates and returns one document.

let database: MigratedDatabase;
let counter = 0;

test.before(async () => {
  database = await migratedDatabase(['acme']);
});
test.after.always(async () => {
  await database?.close();
});

async function holding(...documents: Array<Record<string, unknown>>): Promise<Collection> {
  counter += 1;
  const collection = documentStore(database.tenantDatabase, 'acme').collection(`claims-${counter}`);
  if (documents.length > 0) await collection.insertMany(documents);
  return collection;
}

test('returns the document as it was by default, or as it became with returnDocument "after"', async (t) => {
  const jobs = await holding({ _id: 'a', status: 'open', tries: 0 }, { _id: 'b', status: 'open', tries: 0 });
  t.deepEqual(await jobs.findOneAndUpdate({ status: 'open' }, { $set: { status: 'taken' }, $inc: { tries: 1 } }), { _id: 'a', status: 'open', tries: 0 });
  t.deepEqual(await jobs.findOneAndUpdate({ status: 'open' }, { $set: { status: 'taken' }, $inc: { tries: 1 } }, { returnDocument: 'after' }), { _id: 'b', status: 'taken', tries: 1 });
  t.is(await jobs.findOneAndUpdate({ status: 'open' }, { $set: { status: 'taken' } }), null);
  t.deepEqual(await jobs.find().sort({ _id: 1 }).toArray(), [{ _id: 'a', status: 'taken', tries: 1 }, { _id: 'b', status: 'taken', tries: 1 }]);
});

test('sort picks which document is updated, and projection shapes the answer', async (t) => {
  const tickets = await holding({ _id: 'a', priority: 1 }, { _id: 'b', priority: 5 }, { _id: 'c', priority: 3 });
  t.deepEqual(await tickets.findOneAndUpdate({}, { $set: { picked: true } }, { sort: { priority: -1 }, projection: { priority: 1 }, returnDocument: 'after' }), { _id: 'b', priority: 5 });
  t.deepEqual(await tickets.find({ picked: true }).toArray(), [{ _id: 'b', priority: 5, picked: true }]);
});

test('upsert: null with returnDocument "before", the new document with "after"', async (t) => {
  const counters = await holding();
  t.is(await counters.findOneAndUpdate({ _id: 'seq' }, { $inc: { n: 1 } }, { upsert: true }), null);
  t.deepEqual(await counters.findOneAndUpdate({ _id: 'seq' }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' }), { _id: 'seq', n: 2 });
  t.deepEqual(await counters.findOneAndUpdate({ _id: 'other' }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' }), { _id: 'other', n: 1 });
});

test('concurrent claims hand each document to exactly one caller, and never one already taken', async (t) => {
  const documents = Array.from({ length: 20 }, (_, index) => ({ _id: `job-${String(index).padStart(2, '0')}`, status: 'open' }));
  const jobs = await holding(...documents);
  const claims = await Promise.all(
    Array.from({ length: 30 }, (_, caller) => jobs.findOneAndUpdate({ status: 'open' }, { $set: { status: 'taken', by: caller } }, { returnDocument: 'before' })),
  );
  const claimed = claims.filter((claim): claim is Document => claim !== null);
  t.true(claimed.every((claim) => claim.status === 'open'), 'no caller got a document that was already taken');
  t.deepEqual(claimed.map((claim) => claim._id).sort(), documents.map((document) => document._id), 'each document was claimed, and once');
  t.is(claims.filter((claim) => claim === null).length, 10);
  const stored = await jobs.find().toArray();
  t.true(stored.every((document) => document.status === 'taken'));
  t.is(new Set(stored.map((document) => document.by)).size, 20, 'each document names a different caller');
});

test('options are checked, each unknown one named', async (t) => {
  const jobs = await holding({ _id: 'a', n: 1 });
  const rejects = async (options: unknown, message: RegExp) => {
    await t.throwsAsync(jobs.findOneAndUpdate({}, { $inc: { n: 1 } }, options as never), { instanceOf: DocumentQueryError, message });
  };
  await rejects({ returnOriginal: false }, /findOneAndUpdate: unknown option "returnOriginal" \(it takes returnDocument, upsert, sort, projection\)/);
  await rejects({ returnDocument: 'new' }, /"returnDocument" must be "before" or "after"/);
  await rejects({ upsert: 1 }, /"upsert" must be true or false/);
  await rejects({ sort: { n: 2 } }, /sort direction of "n"/);
  await t.throwsAsync(jobs.findOneAndUpdate({}, { n: 2 } as never), { instanceOf: DocumentQueryError, message: /is not an update operator/ });
  t.deepEqual(await jobs.findOne({}), { _id: 'a', n: 1 });
});
