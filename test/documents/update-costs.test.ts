import test from 'ava';
import type { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { DocumentQueryError, documentStore, type Collection } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase, testTenantDatabase } from '../helpers/database.ts';

// SPEC §17.3: `$push`/`$addToSet` with `$each` cost linear time (they were quadratic: 5 000
// items never finished within the statement limit, each try burning 1.5 s of database CPU), and
// `$inc` past the largest number is the store's own error, not PostgreSQL's `value out of range`.

let database: MigratedDatabase;
let limited: TenantDatabase;
let counter = 0;

test.before(async () => {
  database = await migratedDatabase(['acme']);
  limited = testTenantDatabase(database.url, { queryTimeoutMs: 1500 });
});
test.after.always(async () => {
  await limited?.close();
  await database?.close();
});

async function holding(document: Record<string, unknown>): Promise<Collection> {
  counter += 1;
  const collection = documentStore(limited, 'acme').collection(`costs-${counter}`);
  await collection.insertOne(document);
  return collection;
}

const ITEMS = 5000;
const items = (from: number) => Array.from({ length: ITEMS }, (_, index) => `item-${from + index}`);

test('$push with $each of 5 000 items finishes within the statement limit', async (t) => {
  const things = await holding({ _id: 'x', tags: items(0) });
  t.like(await things.updateOne({ _id: 'x' }, { $push: { tags: { $each: items(ITEMS) } } }), { matchedCount: 1, modifiedCount: 1 });
  const after = await things.findOne({ _id: 'x' });
  t.deepEqual(after?.tags, [...items(0), ...items(ITEMS)]);
});

test('$addToSet with $each of 5 000 items finishes within the statement limit, adding each new value once, in order', async (t) => {
  const things = await holding({ _id: 'x', tags: items(0) });
  // Half of them held already, each new one given twice.
  const given = [...items(ITEMS / 2), ...items(ITEMS / 2)].slice(0, ITEMS);
  t.like(await things.updateOne({ _id: 'x' }, { $addToSet: { tags: { $each: given } } }), { matchedCount: 1, modifiedCount: 1 });
  const after = await things.findOne({ _id: 'x' });
  t.deepEqual(after?.tags, [...items(0), ...items(ITEMS).slice(0, ITEMS / 2)]);
});

test('$pull with $in of 5 000 values from 10 000 finishes within the statement limit, keeping the order', async (t) => {
  const things = await holding({ _id: 'x', tags: [...items(0), ...items(ITEMS)] });
  const removed = items(0).filter((_, index) => index % 2 === 0).concat(items(ITEMS).filter((_, index) => index % 2 === 1));
  t.like(await things.updateOne({ _id: 'x' }, { $pull: { tags: { $in: removed } } }), { matchedCount: 1, modifiedCount: 1 });
  const kept = [...items(0).filter((_, index) => index % 2 === 1), ...items(ITEMS).filter((_, index) => index % 2 === 0)];
  t.deepEqual((await things.findOne({ _id: 'x' }))?.tags, kept);
});

test('$addToSet with $each compares values whole: key order and 1 vs 1.0 aside, types apart', async (t) => {
  const things = await holding({ _id: 'x', set: [{ k: 1, v: 2 }, 1, 'a'] });
  await things.updateOne({ _id: 'x' }, { $addToSet: { set: { $each: [{ v: 2, k: 1 }, 1.0, '1', 'b', null, null, [1], [1], 'b'] } } });
  t.deepEqual((await things.findOne({ _id: 'x' }))?.set, [{ k: 1, v: 2 }, 1, 'a', '1', 'b', null, [1]]);
});

test('$inc past the largest number is a DocumentQueryError naming the path, and nothing changes', async (t) => {
  const things = await holding({ _id: 'x', n: Number.MAX_VALUE, m: -Number.MAX_VALUE });
  await t.throwsAsync(things.updateOne({ _id: 'x' }, { $inc: { n: Number.MAX_VALUE } }), { instanceOf: DocumentQueryError, message: '$inc: "n" would overflow' });
  await t.throwsAsync(things.updateOne({ _id: 'x' }, { $inc: { m: -1e292 } }), { instanceOf: DocumentQueryError, message: '$inc: "m" would overflow' });
  t.deepEqual(await things.findOne({ _id: 'x' }), { _id: 'x', n: Number.MAX_VALUE, m: -Number.MAX_VALUE });
});

test('$inc to just under the largest number, rounding as JavaScript does, is allowed', async (t) => {
  const things = await holding({ _id: 'x', n: Number.MAX_VALUE });
  // Less than half a unit in the last place: JavaScript's sum rounds back to MAX_VALUE.
  await things.updateOne({ _id: 'x' }, { $inc: { n: 1e291 } });
  t.is((await things.findOne({ _id: 'x' }))?.n, Number.MAX_VALUE + 1e291);
});
