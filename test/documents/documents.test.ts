import test from 'ava';
import { DocumentQueryError, DuplicateKeyError, documentStore, type Collection } from '../../lib/documents/index.ts';
import type { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

let database: MigratedDatabase;
let tenantDatabase: TenantDatabase;
let people: Collection;

const PEOPLE = [
  { _id: 'ada', name: 'Ada', age: 36, tags: ['math', 'engines'], address: { city: 'London', zip: 'W1' }, active: true },
  { _id: 'grace', name: 'Grace', age: 85, tags: ['navy', 'cobol'], address: { city: 'Arlington' }, active: false },
  { _id: 'alan', name: 'Alan', age: 41, tags: ['math'], address: { city: 'Wilmslow' }, nick: null },
  { _id: 'linus', name: 'Linus', age: 'unknown', tags: [], active: true },
];

test.before(async () => {
  database = await migratedDatabase(['acme']);
  tenantDatabase = database.tenantDatabase;
  people = documentStore(tenantDatabase, 'acme').collection('people');
  await people.insertMany(PEOPLE);
});
test.after.always(async () => {
  await database?.close();
});

async function ids(filter: Record<string, unknown>): Promise<string[]> {
  return (await people.find(filter).sort({ _id: 1 }).toArray()).map((document) => document._id);
}

test('find with an empty filter returns every document as a plain object', async (t) => {
  const all = await people.find().sort({ _id: 1 }).toArray();
  t.deepEqual(all.map((document) => document._id), ['ada', 'alan', 'grace', 'linus']);
  t.deepEqual(all[0], PEOPLE[0]);
  t.is(Object.getPrototypeOf(all[0]), Object.prototype);
});

const OPERATOR_CASES: Array<[string, Record<string, unknown>, string[]]> = [
  ['equality on a field', { name: 'Ada' }, ['ada']],
  ['equality on a dotted path', { 'address.city': 'London' }, ['ada']],
  ['equality on a scalar matches inside an array', { tags: 'math' }, ['ada', 'alan']],
  ['equality on a whole array', { tags: ['navy', 'cobol'] }, ['grace']],
  ['equality on a whole object is exact', { address: { city: 'Arlington' } }, ['grace']],
  ['a partial object does not equal the whole', { address: { city: 'London' } }, []],
  ['equality with null matches null and missing', { nick: null }, ['ada', 'alan', 'grace', 'linus']],
  ['$eq', { age: { $eq: 41 } }, ['alan']],
  ['$ne includes documents without the field', { active: { $ne: true } }, ['alan', 'grace']],
  ['$gt compares numbers only with numbers', { age: { $gt: 40 } }, ['alan', 'grace']],
  ['$gte', { age: { $gte: 41 } }, ['alan', 'grace']],
  ['$lt', { age: { $lt: 41 } }, ['ada']],
  ['$lte', { age: { $lte: 41 } }, ['ada', 'alan']],
  ['$gt on strings is by code point', { name: { $gt: 'Alan' } }, ['grace', 'linus']],
  ['$gt and $lt together', { age: { $gt: 36, $lt: 85 } }, ['alan']],
  ['$in', { name: { $in: ['Ada', 'Linus', 'Nobody'] } }, ['ada', 'linus']],
  ['$in with an empty list matches nothing', { name: { $in: [] } }, []],
  ['$in on array fields', { tags: { $in: ['cobol', 'engines'] } }, ['ada', 'grace']],
  ['$nin', { name: { $nin: ['Ada', 'Linus'] } }, ['alan', 'grace']],
  ['$exists true includes null values', { nick: { $exists: true } }, ['alan']],
  ['$exists false', { active: { $exists: false } }, ['alan']],
  ['$exists on a dotted path', { 'address.zip': { $exists: true } }, ['ada']],
  ['$and', { $and: [{ tags: 'math' }, { age: { $gt: 40 } }] }, ['alan']],
  ['$or', { $or: [{ name: 'Ada' }, { age: 'unknown' }] }, ['ada', 'linus']],
  ['$or nested in $and', { $and: [{ $or: [{ active: true }, { nick: { $exists: true } }] }, { tags: 'math' }] }, ['ada', 'alan']],
  ['$in on _id', { _id: { $in: ['ada', 'grace'] } }, ['ada', 'grace']],
  ['_id equality', { _id: 'alan' }, ['alan']],
  ['$ne on _id', { _id: { $ne: 'alan' } }, ['ada', 'grace', 'linus']],
  ['several fields are and-ed', { active: true, tags: 'math' }, ['ada']],
];

for (const [title, filter, expected] of OPERATOR_CASES) {
  test(`filter: ${title}`, async (t) => {
    t.deepEqual(await ids(filter), expected);
    t.is(await people.countDocuments(filter), expected.length);
  });
}

const BAD_FILTERS: Array<[string, unknown, RegExp]> = [
  ['an unknown top-level operator', { $where: 'true' }, /unknown operator "\$where"/],
  ['$nor (not supported)', { $nor: [{ name: 'Ada' }] }, /unknown operator "\$nor"/],
  ['an unknown field operator', { name: { $size: 2 } }, /unknown operator "\$size"/],
  ['$not', { age: { $not: { $gt: 1 } } }, /unknown operator "\$not"/],
  ['operators mixed with fields', { address: { $exists: true, city: 'London' } }, /mixes operators and fields/],
  ['$in without an array', { name: { $in: 'Ada' } }, /\$in needs an array/],
  ['$or with an empty array', { $or: [] }, /\$or needs a non-empty array/],
  ['$gt with an object', { age: { $gt: { a: 1 } } }, /\$gt needs a number/],
  ['a regular expression in $in', { name: { $in: [/A/] } }, /regular expressions are not supported/],
  ['an empty path segment', { 'address..city': 'x' }, /not a valid field path/],
  ['a filter that is not an object', 'name', /a filter must be a plain object/],
];

for (const [title, filter, message] of BAD_FILTERS) {
  test(`an invalid filter raises: ${title}`, async (t) => {
    const error = await t.throwsAsync(people.find(filter as Record<string, unknown>).toArray(), { instanceOf: DocumentQueryError });
    t.regex(error.message, message);
    await t.throwsAsync(people.countDocuments(filter as Record<string, unknown>), { instanceOf: DocumentQueryError });
    await t.throwsAsync(people.deleteMany(filter as Record<string, unknown>), { instanceOf: DocumentQueryError });
  });
}

test('operator injection through a value is a filter, not a bypass', async (t) => {
  const users = documentStore(tenantDatabase, 'acme').collection('injection');
  await users.insertMany([{ username: 'alice' }, { username: 'bob' }]);
  const supplied: unknown = { $ne: '' };
  // The store treats the object as the operator it is: callers must check their types first.
  t.is(await users.countDocuments({ username: supplied }), 2);
  t.is(await users.countDocuments({ username: { $eq: supplied } }), 0);
  await t.throwsAsync(users.findOne({ username: { $where: 'sleep(1)' } }), { instanceOf: DocumentQueryError });
});

test('values and field names that look like SQL or jsonpath stay data', async (t) => {
  const tricky = documentStore(tenantDatabase, 'acme').collection('tricky');
  const nasty = `x") || @ == "y' or 1=1 --\\ ?`;
  await tricky.insertOne({ _id: 'a', [nasty]: nasty, 'quote"key': 1 });
  await tricky.insertOne({ _id: 'b', other: 'y' });
  t.deepEqual((await tricky.find({ [nasty]: nasty }).toArray()).map((document) => document._id), ['a']);
  t.is(await tricky.countDocuments({ [nasty]: 'y' }), 0);
  t.is(await tricky.countDocuments({ 'quote"key': 1 }), 1);
  t.is(await tricky.countDocuments({ other: { $gt: nasty } }), 1);
});

test('sort, skip, limit and project', async (t) => {
  const byAge = await people.find({ age: { $gte: 0 } }).sort({ age: -1 }).toArray();
  t.deepEqual(byAge.map((document) => document._id), ['grace', 'alan', 'ada']);
  const page = await people.find().sort({ name: 1 }).skip(1).limit(2).toArray();
  t.deepEqual(page.map((document) => document._id), ['alan', 'grace']);
  t.deepEqual(await people.find({ _id: 'ada' }).project({ name: 1, 'address.city': 1 }).toArray(), [{ _id: 'ada', name: 'Ada', address: { city: 'London' } }]);
  t.deepEqual(await people.find({ _id: 'ada' }).project({ name: 1, _id: 0 }).toArray(), [{ name: 'Ada' }]);
  t.deepEqual(await people.find({ _id: 'alan' }).project({ tags: 0, address: 0, nick: 0 }).toArray(), [{ _id: 'alan', name: 'Alan', age: 41 }]);
  t.deepEqual(await people.find({ _id: 'alan' }).project({ _id: 1 }).toArray(), [{ _id: 'alan' }]);
  t.deepEqual(await people.findOne({ tags: 'math' }, { sort: { age: -1 }, projection: { name: 1 } }), { _id: 'alan', name: 'Alan' });
});

test('a document nested 3 000 levels deep is refused naming the bound (a check overflowed the stack: a RangeError, answered 500)', async (t) => {
  const deep = documentStore(tenantDatabase, 'acme').collection('deep');
  const nested = (levels: number) => JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);
  await t.throwsAsync(deep.insertOne({ password: 'hash', nested: nested(3000) }), { instanceOf: DocumentQueryError, message: /at most 100 levels of nesting \(bound valueDepth\)/ });
  await t.throwsAsync(deep.find({ nested: nested(3000) }).toArray(), { instanceOf: DocumentQueryError, message: /bound valueDepth/ });
  await deep.insertOne({ _id: 'deepest', password: 'hash', nested: nested(99) });
  t.deepEqual(Object.keys((await deep.findOne({ _id: 'deepest' }, { projection: { password: 0 } })) ?? {}), ['_id', 'nested']);
});

test('sort orders types as MongoDB does and strings by code point', async (t) => {
  const mixed = documentStore(tenantDatabase, 'acme').collection('mixed');
  await mixed.insertMany([
    { _id: '1', v: 'b' }, { _id: '2', v: 10 }, { _id: '3', v: 'B' }, { _id: '4' }, { _id: '5', v: 9 }, { _id: '6', v: true }, { _id: '7', v: null },
  ]);
  const ascending = await mixed.find().sort({ v: 1 }).toArray();
  t.deepEqual(ascending.map((document) => document._id), ['4', '7', '5', '2', '3', '1', '6']);
  const descending = await mixed.find().sort({ v: 'desc' }).toArray();
  t.deepEqual(descending.map((document) => document._id), ['6', '1', '3', '2', '5', '4', '7']);
});

test('cursor arguments are checked', async (t) => {
  await t.throwsAsync(people.find().sort({ name: 2 as 1 }).toArray(), { instanceOf: DocumentQueryError, message: /sort direction/ });
  t.throws(() => people.find().limit(1.5), { instanceOf: DocumentQueryError });
  t.throws(() => people.find().skip(-1), { instanceOf: DocumentQueryError });
  await t.throwsAsync(people.find().project({ name: 1, age: 0 }).toArray(), { instanceOf: DocumentQueryError, message: /mix inclusion and exclusion/ });
  await t.throwsAsync(people.find().project({ name: { $slice: 1 } } as never).toArray(), { instanceOf: DocumentQueryError, message: 'projection of "name": unknown operator "$slice" (a projection takes 1 or 0)' });
});

test('a cursor is async-iterable', async (t) => {
  const seen: string[] = [];
  for await (const document of people.find({ tags: 'math' }).sort({ _id: 1 })) seen.push(document._id);
  t.deepEqual(seen, ['ada', 'alan']);
});

test('findOne returns null when nothing matches', async (t) => {
  t.is(await people.findOne({ name: 'Nobody' }), null);
});

test('insertOne generates a string _id and returns the driver shape', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('things');
  const input = { name: 'lamp', bought: new Date('2024-01-02T03:04:05.000Z') };
  const result = await things.insertOne(input);
  t.is(result.acknowledged, true);
  t.regex(result.insertedId, /^[0-9a-f]{24}$/);
  t.false('_id' in input);
  t.deepEqual(await things.findOne({ _id: result.insertedId }), { _id: result.insertedId, name: 'lamp', bought: '2024-01-02T03:04:05.000Z' });
  t.is(await things.countDocuments({ bought: new Date('2024-01-02T03:04:05.000Z') }), 1);
});

test('insertMany returns insertedIds keyed by input index', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('many');
  const result = await things.insertMany([{ _id: 'x' }, { n: 2 }]);
  t.is(result.insertedCount, 2);
  t.deepEqual(Object.keys(result.insertedIds), ['0', '1']);
  t.is(result.insertedIds[0], 'x');
  t.regex(result.insertedIds[1] as string, /^[0-9a-f]{24}$/);
  await t.throwsAsync(things.insertMany([]), { instanceOf: DocumentQueryError });
});

test('a duplicate _id raises DuplicateKeyError and inserts nothing of the batch', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('duplicates');
  await things.insertOne({ _id: 'one' });
  const error = await t.throwsAsync(things.insertMany([{ _id: 'two' }, { _id: 'one' }]), { instanceOf: DuplicateKeyError });
  t.is(error.code, 11000);
  t.is(await things.countDocuments(), 1);
});

test('documents that JSON cannot hold are refused', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('refused');
  await t.throwsAsync(things.insertOne({ n: 10n }), { instanceOf: DocumentQueryError });
  await t.throwsAsync(things.insertOne({ _id: 5 }), { instanceOf: DocumentQueryError, message: /_id must be a string/ });
  await t.throwsAsync(things.insertOne([1] as never), { instanceOf: DocumentQueryError });
  await t.throwsAsync(things.find({ n: Number.NaN }).toArray(), { instanceOf: DocumentQueryError });
});

test('text jsonb cannot hold (NUL, a lone surrogate) is refused on write and equals nothing in a filter, never a database error', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('unstorable-text');
  await things.insertOne({ _id: 'plain', name: 'x' });
  for (const text of ['x\u0000', '\ud800', 'a\udc00b']) {
    const refused = { instanceOf: DocumentQueryError, message: /NUL .* or an unpaired surrogate cannot be stored/ };
    await t.throwsAsync(things.insertOne({ name: text }), refused);
    await t.throwsAsync(things.insertOne({ nested: { [text]: 1 } }), refused);
    await t.throwsAsync(things.insertOne({ _id: text }), refused);
    await t.throwsAsync(things.updateOne({ _id: 'plain' }, { $set: { name: text } }), refused);
    t.is(await things.findOne({ name: text }), null);
    t.is(await things.findOne({ _id: text }), null);
    t.deepEqual(await things.find({ name: { $in: ['x', text] } }).toArray(), [{ _id: 'plain', name: 'x' }]);
    t.is(await things.countDocuments({ name: { $ne: text } }), 1);
    t.is(await things.countDocuments({ tags: [text] }), 0);
    await t.throwsAsync(things.find({ name: { $gt: text } }).toArray(), { instanceOf: DocumentQueryError });
    await t.throwsAsync(things.find({ [`a${text}`]: 1 }).toArray(), { instanceOf: DocumentQueryError, message: /not a valid field path/ });
  }
  t.is(await documentStore(tenantDatabase, 'acme').collection('accounts').findOne({ username: 'x\u0000' }), null);
  t.throws(() => documentStore(tenantDatabase, 'acme').collection('bad\u0000name'), { instanceOf: TypeError });
  t.deepEqual(await things.find().toArray(), [{ _id: 'plain', name: 'x' }]);
});

test('updateOne with $set and $unset, counting only real changes', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('updates');
  await things.insertMany([{ _id: 'a', n: 1, keep: true, drop: 'x' }, { _id: 'b', n: 1 }]);
  t.deepEqual(await things.updateOne({ n: 1 }, { $set: { n: 2, 'deep.path': 'made' }, $unset: { drop: '' } }), {
    acknowledged: true, matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null,
  });
  t.deepEqual(await things.findOne({ _id: 'a' }), { _id: 'a', n: 2, keep: true, deep: { path: 'made' } });
  const unchanged = await things.updateOne({ _id: 'a' }, { $set: { n: 2 } });
  t.is(unchanged.matchedCount, 1);
  t.is(unchanged.modifiedCount, 0);
  const none = await things.updateOne({ _id: 'zzz' }, { $set: { n: 3 } });
  t.deepEqual([none.matchedCount, none.modifiedCount], [0, 0]);
});

test('updateMany updates every match', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('update-many');
  await things.insertMany([{ kind: 'a', n: 1 }, { kind: 'a', n: 2 }, { kind: 'a', n: 2 }, { kind: 'b', n: 1 }]);
  const result = await things.updateMany({ kind: 'a' }, { $set: { n: 2 } });
  t.deepEqual([result.matchedCount, result.modifiedCount], [3, 1]);
  t.is(await things.countDocuments({ n: 2 }), 3);
  t.is(await things.countDocuments({ kind: 'b', n: 1 }), 1);
});

const BAD_UPDATES: Array<[string, unknown, RegExp]> = [
  ['an unknown operator', { $mul: { n: 2 } }, /unknown update operator "\$mul"/],
  ['a replacement document', { n: 1 }, /is not an update operator/],
  ['an empty update', { $set: {} }, /at least one field/],
  ['changing _id', { $set: { _id: 'other' } }, /_id cannot be changed/],
  ['removing _id', { $unset: { _id: '' } }, /_id cannot be removed/],
  ['conflicting paths', { $set: { a: 1, 'a.b': 2 } }, /conflict/],
  ['a field inside a non-object', { $set: { 'n.x': 1 } }, /not an object/],
];

for (const [title, update, message] of BAD_UPDATES) {
  test(`an invalid update raises and changes nothing: ${title}`, async (t) => {
    const things = documentStore(tenantDatabase, 'acme').collection(`bad-update-${title}`);
    await things.insertOne({ _id: 'a', n: 1 });
    await t.throwsAsync(things.updateMany({}, update as never), { instanceOf: DocumentQueryError, message });
    t.deepEqual(await things.findOne({}), { _id: 'a', n: 1 });
  });
}

test('deleteOne and deleteMany', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('deletes');
  await things.insertMany([{ k: 1 }, { k: 1 }, { k: 1 }, { k: 2 }]);
  t.deepEqual(await things.deleteOne({ k: 1 }), { acknowledged: true, deletedCount: 1 });
  t.is(await things.countDocuments({ k: 1 }), 2);
  t.deepEqual(await things.deleteMany({ k: 1 }), { acknowledged: true, deletedCount: 2 });
  t.deepEqual(await things.deleteOne({ k: 1 }), { acknowledged: true, deletedCount: 0 });
  t.is(await things.countDocuments(), 1);
});

test('collection names are checked', (t) => {
  const store = documentStore(tenantDatabase, 'acme');
  t.throws(() => store.collection(''), { instanceOf: TypeError });
  t.throws(() => store.collection('x'.repeat(129)), { instanceOf: TypeError });
  t.throws(() => documentStore(tenantDatabase, ''), { instanceOf: TypeError });
});

test('findOne takes a whole-number skip only, as find does: anything else is a clear error, never the database\'s', async (t) => {
  for (const skip of ['1x', -1, 0.5, Number.NaN, '1']) {
    await t.throwsAsync(people.findOne({}, { skip: skip as number }), { instanceOf: DocumentQueryError, message: /skip needs a whole number/ });
  }
  t.like(await people.findOne({}, { sort: { _id: 1 }, skip: 1 }), { _id: 'alan' });
  t.like(await people.findOne({}, { sort: { _id: 1 }, skip: 0 }), { _id: 'ada' });
});

test('every method names an option it does not know, rather than ignoring it', async (t) => {
  const things = documentStore(tenantDatabase, 'acme').collection('options');
  await things.insertOne({ _id: 'a', n: 1 });
  const calls: Array<[string, () => Promise<unknown>, RegExp]> = [
    ['find', async () => people.find({}, { limit: 1, batchSize: 10 } as never).toArray(), /find: unknown option "batchSize" \(it takes sort, skip, limit, projection\)/],
    ['findOne', () => people.findOne({}, { limit: 2 } as never), /findOne: unknown option "limit" \(it takes sort, skip, projection\)/],
    ['countDocuments', () => people.countDocuments({}, { limit: 1 } as never), /countDocuments: unknown option "limit" \(it takes none\)/],
    ['insertOne', () => things.insertOne({ n: 2 }, { writeConcern: { w: 1 } } as never), /insertOne: unknown option "writeConcern"/],
    ['insertMany', () => things.insertMany([{ n: 2 }], { ordered: false } as never), /insertMany: unknown option "ordered"/],
    ['updateOne', () => things.updateOne({}, { $set: { n: 2 } }, { arrayFilters: [] } as never), /updateOne: unknown option "arrayFilters" \(it takes upsert\)/],
    ['updateMany', () => things.updateMany({}, { $set: { n: 2 } }, { hint: 'x' } as never), /updateMany: unknown option "hint"/],
    ['deleteOne', () => things.deleteOne({}, { collation: {} } as never), /deleteOne: unknown option "collation"/],
    ['deleteMany', () => things.deleteMany({}, { hint: {} } as never), /deleteMany: unknown option "hint"/],
  ];
  for (const [name, call, message] of calls) await t.throwsAsync(call(), { instanceOf: DocumentQueryError, message }, name);
  t.deepEqual(await things.find().toArray(), [{ _id: 'a', n: 1 }]);
});

test('find takes the cursor’s options in its second argument, as the driver does', async (t) => {
  const page = await people.find({ tags: 'math' }, { sort: { age: -1 }, limit: 1, projection: { name: 1 } }).toArray();
  t.deepEqual(page, [{ _id: 'alan', name: 'Alan' }]);
  t.deepEqual((await people.find({}, { sort: { _id: 1 }, skip: 3 }).toArray()).map((document) => document._id), ['linus']);
});
