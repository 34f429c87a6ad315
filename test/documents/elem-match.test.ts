import test from 'ava';
import { DocumentQueryError, documentStore, type Collection, type Filter } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

// $elemMatch (issue 37, point 8): one element of an array meets every condition, as in MongoDB.

let database: MigratedDatabase;
let orders: Collection;
/** A copy of `orders` for the one test that writes: the others read `orders` at the same time. */
let written: Collection;

test.before(async () => {
  database = await migratedDatabase(['acme', 'globex']);
  orders = documentStore(database.tenantDatabase, 'acme').collection('orders');
  const seeded = [
    { _id: 'o1', lines: [{ sku: 'apple', qty: 1 }, { sku: 'pear', qty: 5 }], scores: [1, 9] },
    { _id: 'o2', lines: [{ sku: 'apple', qty: 5 }], scores: [4, 5], customer: { notes: [{ by: 'ann', text: 'rush' }] } },
    { _id: 'o3', lines: { sku: 'apple', qty: 5 }, scores: 5 },
    { _id: 'o4', lines: [], scores: [] },
    { _id: 'o5', lines: [{ sku: 'Apple pie', qty: 2, _id: 'l1' }] },
  ];
  await orders.insertMany(seeded);
  written = documentStore(database.tenantDatabase, 'acme').collection('written');
  await written.insertMany(seeded);
  await documentStore(database.tenantDatabase, 'globex').collection('orders').insertOne({ _id: 'g1', lines: [{ sku: 'apple', qty: 5 }] });
});
test.after.always(async () => {
  await database?.close();
});

async function ids(filter: Filter): Promise<string[]> {
  return (await orders.find(filter).sort({ _id: 1 }).toArray()).map((document) => document._id);
}

const MATCHES: Array<[string, Filter, string[]]> = [
  ['every condition on one element', { lines: { $elemMatch: { sku: 'apple', qty: { $gte: 5 } } } }, ['o2']],
  ['not spread over two elements (which the plain filter allows)', { 'lines.sku': 'apple', 'lines.qty': { $gte: 5 } }, ['o1', 'o2', 'o3']],
  ['operators on scalar elements', { scores: { $elemMatch: { $gt: 3, $lt: 6 } } }, ['o2']],
  ['a value that is no array never matches', { lines: { $elemMatch: { sku: 'apple' } } }, ['o1', 'o2']],
  ['with $regex, $in and $or inside', { lines: { $elemMatch: { $or: [{ sku: /^apple p/i }, { sku: { $in: ['pear'] }, qty: 5 }] } } }, ['o1', 'o5']],
  ['a field of the element named _id', { lines: { $elemMatch: { _id: 'l1' } } }, ['o5']],
  ['on a dotted path', { 'customer.notes': { $elemMatch: { by: 'ann', text: { $regex: '^ru' } } } }, ['o2']],
  ['beside other conditions', { lines: { $elemMatch: { qty: { $gt: 1 } } }, _id: { $ne: 'o2' } }, ['o1', 'o5']],
];

for (const [title, filter, expected] of MATCHES) {
  test(`$elemMatch: ${title}`, async (t) => {
    t.deepEqual(await ids(filter), expected);
    t.is(await orders.countDocuments(filter), expected.length);
  });
}

test('$elemMatch needs a non-empty object of conditions', async (t) => {
  for (const operand of [{}, 'apple', ['apple'], null]) {
    await t.throwsAsync(orders.find({ lines: { $elemMatch: operand } }).toArray(), { instanceOf: DocumentQueryError, message: /\$elemMatch needs a non-empty object of conditions/ });
  }
});

test('$elemMatch never reaches another tenant, in reads, updates and deletes', async (t) => {
  const everything = { lines: { $elemMatch: { sku: { $exists: true } } } };
  t.deepEqual(await ids(everything), ['o1', 'o2', 'o5']);
  await documentStore(database.tenantDatabase, 'globex').collection('written').insertOne({ _id: 'g1', lines: [{ sku: 'apple', qty: 5 }] });
  const globex = documentStore(database.tenantDatabase, 'globex').collection('written');
  t.like(await written.updateMany(everything, { $set: { seen: true } }), { matchedCount: 3 });
  t.is(await globex.countDocuments({ seen: true }), 0);
  t.like(await written.deleteMany({ lines: { $elemMatch: { sku: 'apple', qty: 5 } } }), { deletedCount: 1 });
  t.is(await globex.countDocuments({}), 1);
});

test('the conditions inside $elemMatch count toward the filter bound, at any depth', async (t) => {
  let nested: Filter = { sku: 'apple' };
  for (let depth = 0; depth < 5000; depth++) nested = { lines: { $elemMatch: nested } };
  await t.throwsAsync(orders.find(nested).toArray(), { instanceOf: DocumentQueryError, message: /at most 1000 filter conditions/ });
  const wide = { lines: { $elemMatch: Object.fromEntries(Array.from({ length: 1001 }, (_, index) => [`f${index}`, index])) } };
  await t.throwsAsync(orders.countDocuments(wide), { instanceOf: DocumentQueryError, message: /at most 1000 filter conditions/ });
});
