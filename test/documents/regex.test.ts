import test from 'ava';
import { DocumentQueryError, documentStore, type Collection, type Filter } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

// $regex: matched by PostgreSQL (POSIX ARE), the pattern a bound value.

let database: MigratedDatabase;
let people: Collection;

test.before(async () => {
  database = await migratedDatabase(['acme', 'globex']);
  people = documentStore(database.tenantDatabase, 'acme').collection('people');
  await people.insertMany([
    { _id: 'ada', name: 'Ada Lovelace', tags: ['math', 'Engines'], address: { city: 'London' } },
    { _id: 'alan', name: 'Alan Turing', tags: ['math'], address: { city: 'Wilmslow' } },
    { _id: 'grace', name: 'grace hopper', tags: ['navy'], n: 5 },
    { _id: 'odd', name: 42, tags: [['math']] },
  ]);
  await documentStore(database.tenantDatabase, 'globex').collection('people').insertOne({ _id: 'ada-g', name: 'Ada of Globex' });
});
test.after.always(async () => {
  await database?.close();
});

async function ids(filter: Filter): Promise<string[]> {
  return (await people.find(filter).sort({ _id: 1 }).toArray()).map((document) => document._id);
}

const MATCHES: Array<[string, Filter, string[]]> = [
  ['a string pattern', { name: { $regex: '^A' } }, ['ada', 'alan']],
  ['case matters without i', { name: { $regex: '^a' } }, []],
  ['$options i', { name: { $regex: '^g', $options: 'i' } }, ['grace']],
  ['a RegExp', { name: { $regex: /lace$/ } }, ['ada']],
  ['a RegExp with the i flag', { name: { $regex: /^GRACE/i } }, ['grace']],
  ['a dotted path', { 'address.city': { $regex: 'on$' } }, ['ada']],
  ['an element of an array', { tags: { $regex: '^eng', $options: 'i' } }, ['ada']],
  ['numbers and nested arrays never match', { name: { $regex: '4' }, tags: { $regex: 'math' } }, []],
  ['a missing field never matches', { nick: { $regex: '.*' } }, []],
  ['POSIX ARE: \\y is a word boundary', { name: { $regex: '\\yTuring\\y' } }, ['alan']],
  ['with another operator and in $or', { $or: [{ name: { $regex: '^Ada', $ne: 'x' } }, { n: 5 }] }, ['ada', 'grace']],
  // MongoDB's shorthand, a RegExp as the value (issue 37, point 8).
  ['a RegExp as the value', { name: /^al/i }, ['alan']],
  ['a RegExp as the value, on an array and a dotted path', { tags: /^eng/i, 'address.city': /^Lon/ }, ['ada']],
];

for (const [title, filter, expected] of MATCHES) {
  test(`$regex: ${title}`, async (t) => {
    t.deepEqual(await ids(filter), expected);
    t.is(await people.countDocuments(filter), expected.length);
  });
}

const REFUSED: Array<[string, unknown, RegExp]> = [
  ['the g flag', { name: { $regex: /a/g } }, /\$regex: unsupported flag "g" \(only "i" is supported\)/],
  ['the m option', { name: { $regex: 'a', $options: 'im' } }, /unsupported flag "m"/],
  ['flags twice', { name: { $regex: /a/i, $options: 'i' } }, /either in the RegExp or in \$options/],
  ['a number', { name: { $regex: 5 } }, /\$regex needs a string or a RegExp/],
  ['$options alone', { name: { $options: 'i' } }, /\$options needs a \$regex beside it/],
  ['a pattern over 1000 characters', { name: { $regex: 'a'.repeat(1001) } }, /at most 1000 characters, this one has 1001/],
  ['a pattern PostgreSQL cannot compile', { name: { $regex: '(' } }, /^\$regex: invalid regular expression: .*POSIX ARE/],
  ['a RegExp value with the g flag', { name: /a/g }, /\$regex: unsupported flag "g"/],
];

for (const [title, filter, message] of REFUSED) {
  test(`$regex refused: ${title}`, async (t) => {
    await t.throwsAsync(people.find(filter as Filter).toArray(), { instanceOf: DocumentQueryError, message });
    await t.throwsAsync(people.countDocuments(filter as Filter), { instanceOf: DocumentQueryError, message });
    await t.throwsAsync(people.deleteMany(filter as Filter), { instanceOf: DocumentQueryError, message });
    await t.throwsAsync(people.updateMany(filter as Filter, { $set: { x: 1 } }), { instanceOf: DocumentQueryError, message });
  });
}

test('a pattern of 1000 characters is taken; patterns that look like SQL stay data', async (t) => {
  t.deepEqual(await ids({ name: { $regex: `${'x?'.repeat(499)}A` } }), ['ada', 'alan']);
  t.deepEqual(await ids({ name: { $regex: "' or true -- " } }), []);
});

test('$regex never reaches another tenant', async (t) => {
  t.deepEqual(await ids({ name: { $regex: 'Globex' } }), []);
  t.deepEqual(await ids({ name: /Globex/ }), []);
  t.deepEqual(await ids({ $or: [{ name: { $regex: '.*' } }, { name: { $regex: '' } }] }), ['ada', 'alan', 'grace']);
});
