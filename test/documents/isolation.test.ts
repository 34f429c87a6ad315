import test from 'ava';
import { documentStore, type Collection } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

let database: MigratedDatabase;
let notesOfA: Collection;
let notesOfB: Collection;

const A_DOCUMENTS = [
  { _id: 'shared-id', owner: 'a', secret: 'only for a', n: 1 },
  { _id: 'a-2', owner: 'a', secret: 'also for a', n: 2, maybe: null },
];

test.before(async () => {
  database = await migratedDatabase(['tenant-a', 'tenant-b']);
  notesOfA = documentStore(database.tenantDatabase, 'tenant-a').collection('notes');
  notesOfB = documentStore(database.tenantDatabase, 'tenant-b').collection('notes');
  await notesOfA.insertMany(A_DOCUMENTS);
});
test.after.always(async () => {
  await database?.close();
});

/** Filters that would match tenant A's documents if the tenant condition could be escaped. */
const PROBES = [
  {},
  { _id: 'shared-id' },
  { owner: 'a' },
  { $or: [{ owner: 'a' }, { owner: { $ne: 'a' } }] },
  { tenant: 'tenant-a' },
  { secret: { $exists: true } },
  { n: { $gte: 0 } },
];

for (const filter of PROBES) {
  test.serial(`tenant B sees nothing of A with ${JSON.stringify(filter)}`, async (t) => {
    t.deepEqual(await notesOfB.find(filter).toArray(), []);
    t.is(await notesOfB.findOne(filter), null);
    t.is(await notesOfB.countDocuments(filter), 0);
    t.like(await notesOfB.updateOne(filter, { $set: { owner: 'b' } }), { matchedCount: 0, modifiedCount: 0 });
    t.like(await notesOfB.updateMany(filter, { $set: { owner: 'b' } }), { matchedCount: 0, modifiedCount: 0 });
    t.is((await notesOfB.deleteOne(filter)).deletedCount, 0);
    t.is((await notesOfB.deleteMany(filter)).deletedCount, 0);
    t.deepEqual(await notesOfA.find().sort({ _id: 1 }).toArray(), [A_DOCUMENTS[1], A_DOCUMENTS[0]]);
  });
}

test.serial('an _id taken in tenant A is free in tenant B, and writes stay apart', async (t) => {
  await notesOfB.insertOne({ _id: 'shared-id', owner: 'b' });
  t.deepEqual(await notesOfB.findOne({ _id: 'shared-id' }), { _id: 'shared-id', owner: 'b' });
  await notesOfB.updateOne({ _id: 'shared-id' }, { $set: { secret: 'b secret' } });
  await notesOfB.deleteMany({ owner: 'b' });
  t.deepEqual(await notesOfA.findOne({ _id: 'shared-id' }), A_DOCUMENTS[0]);
  t.is(await notesOfA.countDocuments(), 2);
});

test.serial('a document body cannot name another tenant or collection', async (t) => {
  await notesOfB.insertOne({ _id: 'sneaky', tenant: 'tenant-a', collection: 'notes' });
  t.is(await notesOfA.countDocuments({ _id: 'sneaky' }), 0);
  const [row] = await database.knex('documents').where({ id: 'sneaky' }).select('tenant', 'collection');
  t.deepEqual(row, { tenant: 'tenant-b', collection: 'notes' });
});

test.serial('collections of one tenant are apart too', async (t) => {
  const otherCollection = documentStore(database.tenantDatabase, 'tenant-a').collection('other');
  t.is(await otherCollection.countDocuments(), 0);
  t.is(await otherCollection.findOne({ _id: 'shared-id' }), null);
});

/**
 * The filter leak (issue 11): the compiled filter was appended after the tenant condition
 * without parentheses, so a filter that compiles to an `or` bound the tenant to its first
 * branch only. Each shape below read, counted, changed or deleted tenant A's rows as tenant B.
 */
const LEAKED_SHAPES = [
  { $or: [{ note: { $exists: true } }, { note: { $exists: false } }] },
  { $or: [{ owner: 'nobody' }, { owner: 'a' }] },
  { owner: { $in: ['nobody', 'a'] } },
  { _id: { $in: ['nobody', 'shared-id'] } },
  { maybe: null },
  { maybe: { $eq: null } },
  { maybe: { $in: [null] } },
  { $and: [{ $or: [{ owner: 'nobody' }, { owner: 'a' }] }] },
  { $or: [{ $or: [{ owner: 'nobody' }, { n: { $gte: 0 } }] }] },
  { $or: [{ owner: 'nobody' }, { $or: [{ owner: 'nobody' }, { maybe: null }] }] },
];

for (const filter of LEAKED_SHAPES) {
  test.serial(`filter leak regression: tenant B reaches nothing of A with ${JSON.stringify(filter)}`, async (t) => {
    await notesOfA.deleteMany({});
    await notesOfA.insertMany(A_DOCUMENTS);
    await notesOfB.deleteMany({});
    await notesOfB.insertOne({ _id: 'shared-id', owner: 'b' });
    const ownedByB = (documents: Array<Record<string, unknown>>) => documents.every((document) => document.owner === 'b');
    t.true(ownedByB(await notesOfB.find(filter).toArray()));
    t.true((await notesOfB.countDocuments(filter)) <= 1);
    t.true((await notesOfB.updateMany(filter, { $set: { touched: true } })).matchedCount <= 1);
    t.true((await notesOfB.updateOne(filter, { $set: { touched: true } })).matchedCount <= 1);
    t.like(await notesOfB.findOne({ _id: 'shared-id' }), { _id: 'shared-id', owner: 'b' });
    t.true((await notesOfB.deleteMany(filter)).deletedCount <= 1);
    t.deepEqual(await notesOfA.find().sort({ _id: 1 }).toArray(), [A_DOCUMENTS[1], A_DOCUMENTS[0]]);
  });
}
