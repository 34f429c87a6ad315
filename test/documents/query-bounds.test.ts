import test from 'ava';
import type { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { QUERY_BOUNDS } from '../../lib/documents/bounds.ts';
import { compileUpdate } from '../../lib/documents/update.ts';
import { DocumentQueryError, documentStore, type Collection, type Filter } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase, testTenantDatabase } from '../helpers/database.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';

// SPEC §17.3: every part of a query whose size decides what PostgreSQL (or the service) spends on
// it has a bound; over it, the store refuses the query with an error naming the bound, before
// any SQL is sent. At the bound, the query runs.

let database: MigratedDatabase;
let counted: TenantDatabase;
let statementsSent = 0;
let things: Collection;

test.before(async () => {
  database = await migratedDatabase(['acme']);
  counted = testTenantDatabase(database.url, { queryTimeoutMs: 1500, onStatement: () => statementsSent++ });
  things = documentStore(counted, 'acme').collection('things');
  await things.insertMany(Array.from({ length: 50 }, (_, index) => ({ _id: `t${index}`, n: index, tags: ['a'] })));
});
test.after.always(async () => {
  await counted?.close();
  await database?.close();
});

const keys = (count: number) => Array.from({ length: count }, (_, index) => `f${index}`);
const sortOf = (count: number) => Object.fromEntries(keys(count).map((key) => [key, 1 as const]));
const projectionOf = (count: number) => Object.fromEntries(keys(count).map((key) => [key, 1 as const]));
const andOf = (count: number): Filter => ({ $and: keys(count - 1).map((key, index) => ({ [key]: index })) });
const valuesOf = (count: number) => Array.from({ length: count }, (_, index) => index);
/** A dotted path of `count` keys: `k.k.k`. */
const pathOf = (count: number) => Array.from({ length: count }, () => 'k').join('.');
/** `size` conditions as `$or`s nested ever deeper, each holding one condition beside the next level. */
function nestedOf(size: number): Filter {
  let filter: Filter = size % 2 === 0 ? { n: -1, m: -1 } : { n: -1 };
  for (let level = 0; level < Math.floor((size - 1) / 2); level++) filter = { $or: [{ n: level }, filter] };
  return filter;
}

/** `$elemMatch` nested `depth` levels deep, through an object's field or directly (an array of arrays) in turn. */
function elemMatchOf(depth: number): Filter {
  let condition: Record<string, unknown> = { $gt: 1 };
  for (let level = 0; level < depth; level++) condition = level % 2 === 0 ? { $elemMatch: { a: condition } } : { $elemMatch: condition };
  return { tags: condition };
}

/** An object of `levels` levels: `{a: {a: {}}}` has 3. */
function levelsOf(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level++) value = { a: value };
  return value;
}

interface Bounded {
  readonly name: string;
  readonly bound: number;
  /** The query with `size` of the bounded thing. */
  readonly run: (size: number) => Promise<unknown>;
}

const BOUNDED: Bounded[] = [
  { name: 'sort keys', bound: QUERY_BOUNDS.sortKeys, run: (size) => things.find({}, { sort: sortOf(size) }).toArray() },
  { name: 'sort keys of findOneAndUpdate', bound: QUERY_BOUNDS.sortKeys, run: (size) => things.findOneAndUpdate({ _id: 'none' }, { $set: { x: 1 } }, { sort: sortOf(size) }) },
  { name: 'filter conditions', bound: QUERY_BOUNDS.filterConditions, run: (size) => things.find(andOf(size)).toArray() },
  { name: 'filter conditions of countDocuments', bound: QUERY_BOUNDS.filterConditions, run: (size) => things.countDocuments(andOf(size)) },
  { name: 'filter conditions of deleteMany', bound: QUERY_BOUNDS.filterConditions, run: (size) => things.deleteMany(andOf(size)) },
  { name: 'filter conditions, nested', bound: QUERY_BOUNDS.filterConditions, run: (size) => things.find(nestedOf(size)).toArray() },
  { name: '$in values', bound: QUERY_BOUNDS.inValues, run: (size) => things.find({ n: { $in: valuesOf(size) } }).toArray() },
  { name: '$nin values', bound: QUERY_BOUNDS.inValues, run: (size) => things.countDocuments({ n: { $nin: valuesOf(size) } }) },
  { name: '$in values within $elemMatch', bound: QUERY_BOUNDS.inValues, run: (size) => things.find({ tags: { $elemMatch: { $in: valuesOf(size) } } }).toArray() },
  { name: '$nin values within a nested $elemMatch', bound: QUERY_BOUNDS.inValues, run: (size) => things.countDocuments({ tags: { $elemMatch: { $elemMatch: { $gt: 0, $nin: valuesOf(size) } } } }) },
  { name: '$in values of _id', bound: QUERY_BOUNDS.inValues, run: (size) => things.find({ _id: { $in: valuesOf(size).map(String) } }).toArray() },
  { name: '$each values of $push', bound: QUERY_BOUNDS.eachValues, run: (size) => things.updateOne({ _id: 'none' }, { $push: { tags: { $each: valuesOf(size) } } }) },
  { name: '$each values of $addToSet', bound: QUERY_BOUNDS.eachValues, run: (size) => things.updateOne({ _id: 'none' }, { $addToSet: { tags: { $each: valuesOf(size) } } }) },
  { name: '$in values of $pull', bound: QUERY_BOUNDS.eachValues, run: (size) => things.updateOne({ _id: 'none' }, { $pull: { tags: { $in: valuesOf(size) } } }) },
  { name: 'update fields', bound: QUERY_BOUNDS.updateFields, run: (size) => things.updateOne({ _id: 't1' }, { $set: projectionOf(size) }) },
  { name: 'update fields across operators', bound: QUERY_BOUNDS.updateFields, run: (size) => things.updateOne({ _id: 't2' }, { $set: projectionOf(size - 1), $inc: { counter: 1 } }) },
  { name: 'projection fields', bound: QUERY_BOUNDS.projectionFields, run: (size) => things.find({}).project(projectionOf(size)).toArray() },
  { name: '$elemMatch levels', bound: QUERY_BOUNDS.elemMatchDepth, run: (size) => things.find(elemMatchOf(size)).toArray() },
  { name: '$elemMatch levels of updateMany', bound: QUERY_BOUNDS.elemMatchDepth, run: (size) => things.updateMany(elemMatchOf(size), { $set: { x: 1 } }) },
  { name: 'levels of a document', bound: QUERY_BOUNDS.valueDepth, run: (size) => documentStore(counted, 'acme').collection('nested').insertOne(levelsOf(size)) },
  { name: 'levels of a $set value', bound: QUERY_BOUNDS.valueDepth, run: (size) => things.updateOne({ _id: 'none' }, { $set: { x: levelsOf(size) } }) },
  { name: 'levels of a filter value', bound: QUERY_BOUNDS.valueDepth, run: (size) => things.find({ x: levelsOf(size) }).toArray() },
  { name: 'keys of a filter path', bound: QUERY_BOUNDS.pathKeys, run: (size) => things.find({ [pathOf(size)]: { $gt: 1 } }).toArray() },
  { name: 'keys of a sort path', bound: QUERY_BOUNDS.pathKeys, run: (size) => things.find({}).sort({ [pathOf(size)]: 1 }).toArray() },
  { name: 'keys of an update path', bound: QUERY_BOUNDS.pathKeys, run: (size) => things.updateOne({ _id: 't3' }, { $push: { [pathOf(size)]: 1 } }) },
  { name: 'keys of a projection path', bound: QUERY_BOUNDS.pathKeys, run: (size) => things.find({}).project({ [pathOf(size)]: 1 }).toArray() },
  { name: 'projection fields of findOne', bound: QUERY_BOUNDS.projectionFields, run: (size) => things.findOne({}, { projection: projectionOf(size) }) },
];

for (const { name, bound, run } of BOUNDED) {
  test.serial(`${name}: one over the bound (${bound}) is refused, naming it, before any SQL is sent`, async (t) => {
    const before = statementsSent;
    const error = await t.throwsAsync(async () => run(bound + 1), { instanceOf: DocumentQueryError });
    t.regex(error?.message ?? '', new RegExp(`at most ${bound}\\b`), 'the error names the bound');
    t.regex(error?.message ?? '', new RegExp(`\\b${bound + 1}\\b`), 'and what the query had');
    t.is(statementsSent, before, 'no statement was sent');
  });

  test.serial(`${name}: at the bound (${bound}) the query runs within the statement limit`, async (t) => {
    await t.notThrowsAsync(async () => run(bound));
  });
}

/** The backends running a statement of the store in this test's database. */
async function storeBackendsRunning(): Promise<number> {
  const { rows } = await database.knex.raw<{ rows: Array<{ pid: number }> }>(
    "select pid from pg_stat_activity where application_name like 'spaceport/%' and state = 'active' and datname = current_database()",
  );
  return rows.length;
}

test.serial('the largest allowed filter and sort over 20 000 documents finishes or is cancelled within the limit, in PostgreSQL too', async (t) => {
  const many = documentStore(counted, 'acme').collection('many');
  for (let batch = 0; batch < 4; batch++) {
    await many.insertMany(Array.from({ length: 5000 }, (_, index) => ({ n: batch * 5000 + index, f0: index % 7, label: `item ${index}` })));
  }
  const filter = { $and: keys(QUERY_BOUNDS.filterConditions - 1).map((key, index) => ({ [key]: { $ne: index } })) };
  const started = performance.now();
  await many.find(filter, { sort: sortOf(QUERY_BOUNDS.sortKeys), limit: 20 }).toArray().catch(() => undefined);
  t.true(performance.now() - started < 1500 + 1000, `answered after ${Math.round(performance.now() - started)} ms`);
  let running = await storeBackendsRunning();
  while (running > 0 && performance.now() - started < 1500 + 2000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = await storeBackendsRunning();
  }
  t.is(running, 0, 'no backend of the find runs 2 s after the limit');
});

test('the sort of 2 000 keys the issue found (a backend kept 27 s on CPU) is refused at once', async (t) => {
  const started = performance.now();
  await t.throwsAsync(things.find({}).sort(sortOf(2000)).toArray(), { instanceOf: DocumentQueryError, message: /sort keys/ });
  t.true(performance.now() - started < boundUnderLoad(1000), `refused after ${Math.round(performance.now() - started)} ms`);
});

test('a $set of 20 000 fields (its conflict check took 20 s of the event loop) is refused at once', async (t) => {
  const started = performance.now();
  await t.throwsAsync(things.updateOne({ _id: 't1' }, { $set: projectionOf(20_000) }), { instanceOf: DocumentQueryError, message: /update fields/ });
  t.true(performance.now() - started < boundUnderLoad(1000), `refused after ${Math.round(performance.now() - started)} ms`);
});

test('the largest update the bounds allow (1 000 paths of 100 keys) is checked without holding the event loop (its conflict check took 200 ms)', (t) => {
  const paths = Array.from({ length: QUERY_BOUNDS.updateFields }, (_, index) => Array.from({ length: QUERY_BOUNDS.pathKeys }, (_, depth) => `k${index}_${depth}`).join('.'));
  const update = { $set: Object.fromEntries(paths.map((path) => [path, 1])) };
  // Measured beside a copy of the same update through JSON, which costs linear time too, whatever the machine's load.
  const fastest = (work: () => unknown) =>
    Math.min(
      ...Array.from({ length: 5 }, () => {
        const started = performance.now();
        work();
        return performance.now() - started;
      }),
    );
  const copying = fastest(() => JSON.parse(JSON.stringify(update)));
  const checking = fastest(() => compileUpdate(update));
  t.log(`checked in ${checking.toFixed(1)} ms, copied through JSON in ${copying.toFixed(1)} ms`);
  t.true(checking < 20 * copying, `checked in ${checking.toFixed(1)} ms, copied in ${copying.toFixed(1)} ms`);
  // Still refused when two of them conflict, whatever their order.
  const prefix = (paths[500] as string).split('.').slice(0, 40).join('.');
  const conflicting = { $set: Object.fromEntries(paths.map((path, index) => [index === 700 ? prefix : path, 1])) };
  t.throws(() => compileUpdate(conflicting), { instanceOf: DocumentQueryError, message: /update paths "k500_0\.[^"]*k500_39" and "k500_0\.[^"]*k500_99" conflict/ });
});

test('a filter path of 20 000 keys (PostgreSQL: "stack depth limit exceeded", answered 500) is refused before any SQL is sent', async (t) => {
  const before = statementsSent;
  await t.throwsAsync(things.find({ [pathOf(20_000)]: 1 }).toArray(), { instanceOf: DocumentQueryError, message: /path keys/ });
  t.is(statementsSent, before);
});

test('a $push path of 100 000 keys (its conflict check held the event loop for minutes) is refused at once', async (t) => {
  const started = performance.now();
  await t.throwsAsync(things.updateOne({ _id: 't1' }, { $push: { [pathOf(100_000)]: 1 } }), { instanceOf: DocumentQueryError, message: /path keys/ });
  t.true(performance.now() - started < boundUnderLoad(1000), `refused after ${Math.round(performance.now() - started)} ms`);
});

test('$elemMatch nested 40 levels (planned for over a second; at 50 past the statement limit: 503) is refused before any SQL is sent', async (t) => {
  const before = statementsSent;
  await t.throwsAsync(things.find(elemMatchOf(40)).toArray(), { instanceOf: DocumentQueryError, message: /\$elemMatch levels/ });
  await t.throwsAsync(things.find({ $or: [{ n: 1 }, { $and: [elemMatchOf(40)] }] }).toArray(), { instanceOf: DocumentQueryError, message: /\$elemMatch levels/ });
  t.is(statementsSent, before);
});

test('the largest $and of $elemMatch chains at the bound answers well within the statement limit', async (t) => {
  const chains = Array.from({ length: Math.floor(QUERY_BOUNDS.filterConditions / (QUERY_BOUNDS.elemMatchDepth + 2)) }, () => elemMatchOf(QUERY_BOUNDS.elemMatchDepth));
  const started = performance.now();
  await things.find({ $and: chains }).toArray();
  t.true(performance.now() - started < boundUnderLoad(1000), `answered after ${Math.round(performance.now() - started)} ms`);
});

test.serial('a $in of 20 000 objects over 2 000 documents holding arrays answers well within the statement limit (each element was compared with every value: 6 s, 503)', async (t) => {
  const lines = documentStore(counted, 'acme').collection('lines');
  await lines.insertMany(Array.from({ length: 2000 }, (_, index) => ({ items: [{ sku: index }, { sku: -index }] })));
  const wanted = Array.from({ length: 20_000 }, (_, index) => ({ sku: index + 1000 }));
  const started = performance.now();
  t.is(await lines.countDocuments({ items: { $in: wanted } }), 1000);
  t.true(performance.now() - started < boundUnderLoad(1000), `answered after ${Math.round(performance.now() - started)} ms`);
  t.is(await lines.countDocuments({ items: { $nin: wanted } }), 1000);
  t.is(await lines.countDocuments({ items: { $elemMatch: { $in: wanted } } }), 1000);
});

test('the $and of 20 000 conditions the issue found is refused at once', async (t) => {
  await t.throwsAsync(things.find(andOf(20_000)).toArray(), { instanceOf: DocumentQueryError, message: /filter conditions/ });
});
