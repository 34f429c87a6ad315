import test from 'ava';
import fc from 'fast-check';
import type { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { isDatabaseUnreachable } from '../../lib/db/connect.ts';
import { documentStore, DocumentQueryError, DuplicateKeyError, type Collection } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase, testTenantDatabase } from '../helpers/database.ts';

/**
 * SPEC §17.3 as a property: whatever shape a filter, sort, projection, update or document takes (wide, deep, long
 * paths, nested `$elemMatch`, long lists, odd keys and values), the store answers it within the statement limit, is
 * cancelled at it (503), or refuses it with a DocumentQueryError (a DuplicateKeyError for a write that breaks `_id`),
 * never another error: not PostgreSQL's (a 500), not a RangeError. The cost of what is allowed has tests of its own
 * (query-bounds.test.ts).
 */
const RUNS = 40;
/** `PROPERTY_SEED` replays a run: fast-check prints the seed of a failure. */
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);

let database: MigratedDatabase;
let limited: TenantDatabase;
let things: Collection;

test.before(async () => {
  database = await migratedDatabase(['acme']);
  limited = testTenantDatabase(database.url, { queryTimeoutMs: 500 });
  things = documentStore(limited, 'acme').collection('things');
  await things.insertMany(Array.from({ length: 200 }, (_, index) => ({ n: index, s: `s${index}`, tags: [index, [index], { k: index }], a: { b: [{ c: index }] } })));
});
test.after.always(async () => {
  await limited?.close();
  await database?.close();
});

/** How big a shape grows: mostly small, sometimes about a bound (8, 32, 100), sometimes far past the others. */
const size = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 15, max: 40 }), fc.integer({ min: 95, max: 105 }), fc.constantFrom(1001, 5000, 20_000));
/** A list's length: the lists of one filter together stay within what a 1 MB request body could carry. */
const listLength = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constant(200));
const key = fc.constantFrom('n', 's', 'tags', 'a', 'a.b', 'a.b.c', '_id', 'constructor', 'x');
const scalar = fc.oneof(fc.integer({ min: -5, max: 205 }), fc.constantFrom('s1', '', 'a"b', 1e308, -0.5, true, null));
const pathOf = (length: number) => Array.from({ length: Math.max(1, length) }, () => 'a').join('.');
const nested = (levels: number, inner: unknown) => Array.from({ length: levels }).reduce<unknown>((value) => ({ a: value }), inner);
const elemMatchOf = (levels: number, inner: unknown) => Array.from({ length: levels }).reduce<unknown>((value, _, index) => ({ $elemMatch: index % 2 === 0 ? value : { a: value } }), inner);

const condition: fc.Arbitrary<unknown> = fc.oneof(
  scalar,
  fc.record({ $in: fc.tuple(listLength, scalar).map(([length, value]) => Array.from({ length }, () => value)) }),
  fc.record({ $nin: listLength.map((length) => Array.from({ length }, (_, index) => ({ k: index }))) }),
  fc.record({ $gt: scalar, $lt: scalar }),
  fc.record({ $regex: fc.constantFrom('^s1', '(a|b)*c', '[', 'x{1,1000}'), $options: fc.constantFrom('i', '') }),
  fc.tuple(size, scalar).map(([levels, value]) => elemMatchOf(levels, { $in: [value] })),
  fc.tuple(size, scalar).map(([levels, value]) => nested(levels, value)),
);
const field = fc.oneof(key, size.map(pathOf));
/**
 * Many fields, or a few of any length: 20 000 fields of a 20 000-key path would be 800 MB of names, built by the test
 * before the store refuses them (no request body could carry them), and the test stalled collecting its own garbage.
 */
const fields = fc.oneof(fc.tuple(size, key), fc.tuple(fc.integer({ min: 1, max: 3 }), size.map(pathOf)));
/**
 * The branches of an `$and` or `$or`: many of a plain condition, or a few of any. One condition repeated 20 000 times
 * is one object in this process but 20 000 copies to the store's walkers, as no request body could be: 20 000 branches
 * of 20 000 levels of `$elemMatch` held the test for minutes in walking what the bounds then refuse.
 */
const branches = fc.oneof(fc.tuple(size, key, scalar), fc.tuple(fc.integer({ min: 1, max: 12 }), field, condition));
const filter: fc.Arbitrary<Record<string, unknown>> = fc
  .oneof(
    fc.dictionary(field, condition, { maxKeys: 3 }),
    branches.map(([count, name, value]) => ({ $and: Array.from({ length: Math.max(1, count) }, () => ({ [name]: value })) })),
    branches.map(([count, name, value]) => ({ $or: Array.from({ length: Math.max(1, count) }, () => ({ [name]: value })) })),
  )
  .map(printable);
const sort = fc.oneof(fc.constant(undefined), fields.map(([count, name]) => printable(Object.fromEntries(Array.from({ length: count }, (_, index) => [`${name}${index}`, 1 as const])))));
const update = fc.oneof(
  fc.tuple(field, condition).map(([name, value]) => ({ $set: { [name]: value } })),
  fc.tuple(field, listLength).map(([name, count]) => ({ $push: { [name]: { $each: Array.from({ length: count }, (_, index) => index) } } })),
  fc.tuple(field, listLength).map(([name, count]) => ({ $addToSet: { [name]: { $each: Array.from({ length: count }, (_, index) => ({ index })) } } })),
  fields.map(([count, name]) => ({ $inc: Object.fromEntries(Array.from({ length: count }, (_, index) => [`${name}${index}`, 1])) })),
).map(printable);
const document = condition.map((value) => printable({ value }));

/** Shapes print cut short in a counterexample: fast-check's own printer recurses, and some are 20 000 levels deep. */
function printable<Shape extends object>(shape: Shape): Shape {
  const text = () => {
    try {
      return JSON.stringify(shape).slice(0, 300);
    } catch {
      return '(nested too deep to print)';
    }
  };
  return Object.defineProperty(shape, fc.toStringMethod, { value: text, enumerable: false });
}

/** Answered within the statement limit, or cancelled at it (503), or refused by the store: never anything else. */
async function answersOrRefuses(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof DocumentQueryError || error instanceof DuplicateKeyError || isDatabaseUnreachable(error)) return;
    const { name, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
    throw new Error(`${String(name)} ${String(code)}: ${String(message).slice(0, 200)}`);
  }
}

test.serial('every filter, sort and projection is answered or refused with a DocumentQueryError', async (t) => {
  await fc.assert(
    fc.asyncProperty(filter, sort, field, async (where, order, projected) => {
      await answersOrRefuses(() => things.find(where, { sort: order, projection: { [projected]: 0 }, limit: 5 }).toArray());
      await answersOrRefuses(() => things.countDocuments(where));
    }),
    { numRuns: RUNS, includeErrorInReport: true, seed: SEED },
  );
  t.pass();
});

test.serial('every update and document is applied or refused with a DocumentQueryError', async (t) => {
  await fc.assert(
    fc.asyncProperty(filter, update, document, async (where, change, written) => {
      await answersOrRefuses(() => things.updateMany(where, change));
      await answersOrRefuses(() => things.insertOne({ ...written }));
    }),
    { numRuns: RUNS, includeErrorInReport: true, seed: SEED },
  );
  t.pass();
});
