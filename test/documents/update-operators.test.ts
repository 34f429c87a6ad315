import test from 'ava';
import { DocumentQueryError, documentStore, type Collection, type UpdateSpec } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

// The update operators, applied by PostgreSQL in the update statement itself (no read-modify-write).

let database: MigratedDatabase;
let counter = 0;

test.before(async () => {
  database = await migratedDatabase(['acme']);
});
test.after.always(async () => {
  await database?.close();
});

/** A collection of its own for each use, holding `documents`. */
async function holding(...documents: Array<Record<string, unknown>>): Promise<Collection> {
  counter += 1;
  const collection = documentStore(database.tenantDatabase, 'acme').collection(`updates-${counter}`);
  if (documents.length > 0) await collection.insertMany(documents);
  return collection;
}

const CASES: Array<[string, Record<string, unknown>, UpdateSpec, Record<string, unknown>]> = [
  ['$inc adds to a number', { n: 1 }, { $inc: { n: 2 } }, { n: 3 }],
  ['$inc takes a negative and a fraction', { n: 1 }, { $inc: { n: -0.5 } }, { n: 0.5 }],
  ['$inc adds as JavaScript does (binary floating point)', { n: 0.1 }, { $inc: { n: 0.2 } }, { n: 0.1 + 0.2 }],
  ['$inc on a missing field sets it', {}, { $inc: { n: 5 } }, { n: 5 }],
  ['$inc on a dotted path creates the objects on the way', {}, { $inc: { 'stats.views': 1 } }, { stats: { views: 1 } }],
  ['$push appends', { tags: ['a'] }, { $push: { tags: 'b' } }, { tags: ['a', 'b'] }],
  ['$push appends an array as one element', { tags: ['a'] }, { $push: { tags: ['b', 'c'] } }, { tags: ['a', ['b', 'c']] }],
  ['$push with $each appends each', { tags: ['a'] }, { $push: { tags: { $each: ['b', 'a'] } } }, { tags: ['a', 'b', 'a'] }],
  ['$push to a missing field makes an array', {}, { $push: { 'history.log': { at: 1 } } }, { history: { log: [{ at: 1 }] } }],
  ['$addToSet appends a new value', { tags: ['a'] }, { $addToSet: { tags: 'b' } }, { tags: ['a', 'b'] }],
  ['$addToSet with $each adds each new value once', { tags: ['a'] }, { $addToSet: { tags: { $each: ['a', 'b', 'b', 'c'] } } }, { tags: ['a', 'b', 'c'] }],
  ['$addToSet compares objects whole', { set: [{ k: 1, v: 2 }] }, { $addToSet: { set: { v: 2, k: 1 } } }, { set: [{ k: 1, v: 2 }] }],
  ['$pull removes every equal element', { tags: ['a', 'b', 'a', 'c'] }, { $pull: { tags: 'a' } }, { tags: ['b', 'c'] }],
  ['$pull with $in removes any of the values', { tags: ['a', 'b', 'c'] }, { $pull: { tags: { $in: ['a', 'c', 'z'] } } }, { tags: ['b'] }],
  ['$pull compares numbers by value', { n: [1, 2, 1.0] }, { $pull: { n: 1 } }, { n: [2] }],
  ['$pull to an empty array', { tags: ['a'] }, { $pull: { tags: 'a' } }, { tags: [] }],
  ['$pull on a missing field changes nothing', { k: 1 }, { $pull: { tags: 'a' } }, { k: 1 }],
  ['$unset removes a nested field', { a: { b: 1, c: 2 } }, { $unset: { 'a.b': '' } }, { a: { c: 2 } }],
  ['several operators at once', { n: 1, tags: [] }, { $inc: { n: 1 }, $push: { tags: 'x' }, $set: { done: true } }, { n: 2, tags: ['x'], done: true }],
];

for (const [title, before, update, after] of CASES) {
  test(`update: ${title}`, async (t) => {
    const things = await holding({ _id: 'x', ...before });
    await things.updateOne({ _id: 'x' }, update);
    t.deepEqual(await things.findOne({ _id: 'x' }), { _id: 'x', ...after });
  });
}

test('modifiedCount counts only documents that really changed', async (t) => {
  const things = await holding({ _id: 'a', tags: ['x'], n: 1 }, { _id: 'b', tags: ['y'], n: 1 });
  t.like(await things.updateMany({}, { $addToSet: { tags: 'x' } }), { matchedCount: 2, modifiedCount: 1 });
  t.like(await things.updateMany({}, { $pull: { tags: 'nothing' } }), { matchedCount: 2, modifiedCount: 0 });
  t.like(await things.updateMany({}, { $inc: { n: 0 } }), { matchedCount: 2, modifiedCount: 0 });
  t.like(await things.updateOne({ _id: 'b' }, { $push: { tags: { $each: [] } } }), { matchedCount: 1, modifiedCount: 0 });
  t.like(await things.updateMany({}, { $inc: { n: 1 } }), { matchedCount: 2, modifiedCount: 2 });
});

const TYPE_ERRORS: Array<[string, UpdateSpec, RegExp]> = [
  ['$inc on a string', { $inc: { 'meta.name': 1 } }, /^\$inc: "meta.name" holds a string, not a number$/],
  ['$inc on null', { $inc: { nothing: 1 } }, /^\$inc: "nothing" holds a null, not a number$/],
  ['$push to a number', { $push: { n: 1 } }, /^\$push: "n" holds a number, not an array$/],
  ['$addToSet to an object', { $addToSet: { meta: 1 } }, /^\$addToSet: "meta" holds a object, not an array$/],
  ['$pull from a string', { $pull: { 'meta.name': 'a' } }, /^\$pull: "meta.name" holds a string, not an array$/],
  ['$inc inside a number', { $inc: { 'n.deeper': 1 } }, /^cannot create field "n.deeper": "n" is not an object$/],
  ['$push inside an array', { $push: { 'tags.0': 1 } }, /^cannot create field "tags.0": "tags" is not an object$/],
];

for (const [title, update, message] of TYPE_ERRORS) {
  test(`a value of the wrong type is an error naming its path, and nothing changes: ${title}`, async (t) => {
    // The first document could take the update; the second cannot: neither changes.
    const fine = { _id: 'a' };
    const wrong = { _id: 'b', n: 1, tags: ['t'], meta: { name: 'm' }, nothing: null };
    const things = await holding(fine, wrong);
    await t.throwsAsync(things.updateMany({}, update), { instanceOf: DocumentQueryError, message });
    t.deepEqual(await things.find().sort({ _id: 1 }).toArray(), [fine, wrong]);
  });
}

const BAD_OPERANDS: Array<[string, unknown, RegExp]> = [
  ['$inc by a string', { $inc: { n: '1' } }, /\$inc "n" needs a finite number, got "1"/],
  ['$inc by Infinity', { $inc: { n: Number.POSITIVE_INFINITY } }, /\$inc "n" needs a finite number/],
  ['$push with $slice', { $push: { tags: { $each: [1], $slice: -5 } } }, /\$push "tags": unknown modifier "\$slice"/],
  ['$push with $each not an array', { $push: { tags: { $each: 1 } } }, /\$each needs an array/],
  ['$addToSet with $position', { $addToSet: { tags: { $position: 0 } } }, /\$addToSet "tags": unknown modifier "\$position"/],
  ['$pull by a condition', { $pull: { n: { $gt: 1 } } }, /\$pull "n": unknown operator "\$gt"/],
  ['an unknown operator', { $rename: { a: 'b' } }, /unknown update operator "\$rename"/],
  ['$inc of _id', { $inc: { _id: 1 } }, /_id cannot be changed/],
  ['$push and $pull on one path', { $push: { tags: 1 }, $pull: { tags: 2 } }, /update paths "tags" and "tags" conflict/],
  ['__proto__ as a path', { $inc: { '__proto__.polluted': 1 } }, /"__proto__" cannot be a key/],
  ['__proto__ inside a pushed value', { $push: { tags: JSON.parse('{"__proto__": {"polluted": 1}}') } }, /"__proto__" cannot be a key/],
  ['a RegExp pushed', { $push: { tags: /x/ } }, /regular expressions are not supported/],
];

for (const [title, update, message] of BAD_OPERANDS) {
  test(`an update is checked before any row is touched: ${title}`, async (t) => {
    const things = await holding({ _id: 'a', n: 1, tags: [] });
    await t.throwsAsync(things.updateMany({}, update as UpdateSpec), { instanceOf: DocumentQueryError, message });
    // Checked even when nothing matches: the error does not depend on the data.
    await t.throwsAsync(things.updateOne({ _id: 'none' }, update as UpdateSpec), { instanceOf: DocumentQueryError, message });
    t.deepEqual(await things.findOne({}), { _id: 'a', n: 1, tags: [] });
    t.is(({} as Record<string, unknown>).polluted, undefined);
  });
}

test('paths that look like SQL or jsonpath stay data', async (t) => {
  const nasty = `x") || @ == "y' or 1=1 --\\ ?`;
  const things = await holding({ _id: 'a' });
  await things.updateOne({ _id: 'a' }, { $inc: { [nasty]: 1 }, $push: { [`${nasty}{}`]: nasty } });
  t.deepEqual(await things.findOne({ _id: 'a' }), { _id: 'a', [nasty]: 1, [`${nasty}{}`]: [nasty] });
});

test('50 concurrent $inc of one field end exact', async (t) => {
  const things = await holding({ _id: 'counter', n: 0 });
  const results = await Promise.all(Array.from({ length: 50 }, () => things.updateOne({ _id: 'counter' }, { $inc: { n: 1 } })));
  t.true(results.every((result) => result.modifiedCount === 1));
  t.deepEqual(await things.findOne({ _id: 'counter' }), { _id: 'counter', n: 50 });
});

test('concurrent $push and $addToSet of different values keep every one', async (t) => {
  const things = await holding({ _id: 'ticket', history: [], watchers: [] });
  await Promise.all(
    Array.from({ length: 30 }, (_, index) =>
      things.updateMany({ _id: 'ticket' }, { $push: { history: index }, $addToSet: { watchers: `w${index % 10}` } }),
    ),
  );
  const ticket: Record<string, unknown> = (await things.findOne({ _id: 'ticket' })) ?? {};
  t.deepEqual([...(ticket.history as number[])].sort((left, right) => left - right), Array.from({ length: 30 }, (_, index) => index));
  t.deepEqual([...(ticket.watchers as string[])].sort(), Array.from({ length: 10 }, (_, index) => `w${index}`));
});
