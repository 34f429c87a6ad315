import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import { db, DocumentQueryError, DuplicateKeyError, type Collection, type Filter } from '../../lib/documents/index.ts';
import { createTenant, runInTenant } from '../../lib/tenancy/index.ts';
import { loginProblems, nonStandardPrototype, prototypeChanges, quickLogin, restorePrototypes, snapshotPrototypes, type Login } from './prototypes.ts';
import { dropTestDatabase, startTestService, type ServiceUnderTest } from './service.ts';

/**
 * The property "paths are data, never prototypes", over generated paths and operations. Path
 * segments and document keys come from a pool of the names that reach into an object's
 * prototype chain (`__proto__`, `constructor`, `prototype`, inherited methods) and of ordinary
 * names and digits. Every operation runs against the real store of a real service; after each
 * case the prototypes, the result objects, and a login in another tenant are checked.
 */
const SEGMENTS = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__', 'a', 'b', '0', '1'] as const;

/** The one key the store refuses (lib/documents/keys.ts); the others are ordinary keys. */
const REFUSED_KEY = '__proto__';

/** `__proto__` drawn three times as often as each other name: it is the one that reaches a prototype. */
const segment = fc.oneof({ weight: 3, arbitrary: fc.constant(REFUSED_KEY) }, { weight: SEGMENTS.length - 1, arbitrary: fc.constantFrom(...SEGMENTS.filter((name) => name !== REFUSED_KEY)) });
const fieldPath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((keys) => keys.join('.'));
const scalar = fc.constantFrom(0, 1, 'x', 'constructor', true, null);

/** An object built as JSON.parse builds one from a request: every key an own property, `__proto__` too. */
function objectOf<Value>(keys: fc.Arbitrary<string>, values: fc.Arbitrary<Value>, minKeys = 0): fc.Arbitrary<Record<string, Value>> {
  return fc.array(fc.tuple(keys, values), { minLength: minKeys, maxLength: 3 }).map((entries) => Object.fromEntries(entries));
}

/** A JSON value nested `depth` levels, keys from the pool inside objects and inside arrays. */
function jsonOf(depth: number): fc.Arbitrary<unknown> {
  if (depth === 0) return scalar;
  const inner = jsonOf(depth - 1);
  return fc.oneof({ weight: 3, arbitrary: scalar }, { weight: 2, arbitrary: objectOf(segment, inner) }, { weight: 1, arbitrary: fc.array(inner, { maxLength: 3 }) });
}

const value = jsonOf(3);
const document = fc.tuple(fc.constantFrom('d0', 'd1', 'd2', 'd3'), objectOf(segment, jsonOf(3))).map(([id, body]) => Object.fromEntries([...Object.entries(body), ['_id', id]]));

const condition = fc.oneof(
  value,
  value.map((operand) => ({ $eq: operand })),
  value.map((operand) => ({ $ne: operand })),
  fc.array(value, { maxLength: 3 }).map((operands) => ({ $in: operands })),
  fc.array(value, { maxLength: 3 }).map((operands) => ({ $nin: operands })),
  fc.boolean().map((flag) => ({ $exists: flag })),
  fc.tuple(fc.constantFrom('$gt', '$lte'), fc.constantFrom(0, 1, 'x')).map(([operator, operand]) => ({ [operator]: operand })),
);

function filterOf(depth: number): fc.Arbitrary<Filter> {
  const leaf = objectOf(fieldPath, condition);
  if (depth === 0) return leaf;
  const branches = fc.array(filterOf(depth - 1), { minLength: 1, maxLength: 2 });
  return fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 1, arbitrary: branches.map((all) => ({ $and: all })) }, { weight: 1, arbitrary: branches.map((any) => ({ $or: any })) });
}

/** Half the filters are `{}`, so that writes and projections meet documents. */
const filter = fc.oneof(fc.constant({}), filterOf(2));
const sort = fc.option(objectOf(fieldPath, fc.constantFrom(1 as const, -1 as const), 1), { nil: undefined });
const projection = fc.option(fc.constantFrom(0 as const, 1 as const).chain((flag) => objectOf(fieldPath, fc.constant(flag), 1)), { nil: undefined });
const update = fc.tuple(objectOf(fieldPath, value), objectOf(fieldPath, fc.constant(''))).map(([set, unset]) => ({
  ...(Object.keys(set).length > 0 || Object.keys(unset).length === 0 ? { $set: set } : {}),
  ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}),
}));

type Read = { filter: Filter; sort?: Record<string, 1 | -1>; projection?: Record<string, 0 | 1> };
type Update = { $set?: Record<string, unknown>; $unset?: Record<string, unknown> };

type PathOperation =
  | { kind: 'insertOne'; document: Record<string, unknown> }
  | { kind: 'insertMany'; documents: Array<Record<string, unknown>> }
  | ({ kind: 'find' | 'findOne' } & Read)
  | { kind: 'countDocuments' | 'deleteMany'; filter: Filter }
  | { kind: 'updateOne' | 'updateMany'; filter: Filter; update: Update };

const operation: fc.Arbitrary<PathOperation> = fc.oneof(
  document.map((given) => ({ kind: 'insertOne', document: given }) as const),
  fc.array(document, { minLength: 1, maxLength: 3 }).map((given) => ({ kind: 'insertMany', documents: given }) as const),
  fc.record({ kind: fc.constantFrom('find', 'findOne'), filter, sort, projection }),
  fc.record({ kind: fc.constantFrom('countDocuments', 'deleteMany'), filter }),
  fc.record({ kind: fc.constantFrom('updateOne', 'updateMany'), filter, update }),
);

interface PathCase {
  /** Rows already in the table, written as an older version might have (`__proto__` keys too). */
  readonly stored: Array<Record<string, unknown>>;
  readonly operations: PathOperation[];
}

const pathCase: fc.Arbitrary<PathCase> = fc.record({
  stored: fc.uniqueArray(document, { maxLength: 4, selector: (given) => given._id }),
  operations: fc.array(operation, { minLength: 1, maxLength: 6 }),
});

interface PathWorld {
  readonly service: ServiceUnderTest;
  readonly login: Login;
  close(): Promise<void>;
}

const TENANT = 'acme';
const COLLECTION = 'things';

/** A real service over a fresh database: the operations run in tenant acme, the login of the check is an account of tenant globex. */
async function pathWorld(): Promise<PathWorld> {
  const service = await startTestService(undefined, { expert: { spaces: { enabled: true }, rateLimit: { login: { windowMs: 60_000, max: 1_000_000 } } } });
  for (const tenant of [TENANT, 'globex']) await createTenant(service.runtime.knex, tenant);
  const login = await quickLogin(service, 'globex');
  return { service, login, close: async () => { await service.close(); await dropTestDatabase(); } };
}

/**
 * Registers the property as the calling file's test: `runs` cases against one world, started
 * before it and closed after. The cases run one after another: they share the process's prototypes.
 */
export function testPathProperty(runs: number, seed?: number): void {
  let world: PathWorld | undefined;
  test.before(async () => {
    world = await pathWorld();
  });
  test.after.always(async () => {
    await world?.close();
  });
  test.serial(`no generated path or key reaches a prototype, and logins still work after every case (${runs} cases)`, async (t) => {
    const started = performance.now();
    const ready = world as PathWorld;
    await fc.assert(fc.asyncProperty(pathCase, (example) => checkPathCase(ready, example)), { numRuns: runs, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) });
    t.log(`${runs} cases in ${Math.round(performance.now() - started)} ms`);
    t.pass();
  });
}

/** Runs one case and throws every broken promise of the property at once; the prototypes are put back whatever happened. */
async function checkPathCase(world: PathWorld, example: PathCase): Promise<void> {
  const before = snapshotPrototypes();
  try {
    await replaceRows(world, example.stored);
    const problems: string[] = [];
    for (const [index, given] of example.operations.entries()) {
      for (const problem of await checkedOperation(world, given)) problems.push(`operation ${index} (${given.kind}): ${problem}`);
    }
    problems.push(...prototypeChanges(before), ...(await loginProblems(world.service, world.login)));
    if (problems.length > 0) throw new Error(problems.join('\n'));
  } finally {
    if (prototypeChanges(before).length > 0) restorePrototypes(before);
  }
}

const WRITES = new Set<PathOperation['kind']>(['insertOne', 'insertMany', 'updateOne', 'updateMany', 'deleteMany']);

/** Runs one operation and lists what it broke: the rule on `__proto__`, plain keys, result prototypes, failed writes that wrote. */
async function checkedOperation(world: PathWorld, given: PathOperation): Promise<string[]> {
  const rowsBefore = await storedRows(world);
  const matchedBefore = given.kind === 'updateMany' ? await outcome(() => inStore(world, (things) => things.find(given.filter).toArray())) : undefined;
  const result = await outcome(() => inStore(world, (things) => run(things, given)));
  const refusedKey = mentionsRefusedKey(given);
  if ('error' in result) {
    const { error } = result;
    const problems: string[] = [];
    if (!(error instanceof DocumentQueryError || error instanceof DuplicateKeyError)) problems.push(`threw ${String(error)}`);
    if (!refusedKey && String(error).includes(`"${REFUSED_KEY}"`)) problems.push(`refused for ${REFUSED_KEY} without one: ${String(error)}`);
    if (WRITES.has(given.kind) && !isDeepStrictEqual(await storedRows(world), rowsBefore)) problems.push('failed, yet rows changed');
    return problems;
  }
  if (refusedKey) return [`accepted a path or key "${REFUSED_KEY}" and answered ${JSON.stringify(result.ok)}`];
  const foreign = nonStandardPrototype(result.ok);
  if (foreign !== undefined) return [`${foreign} has a prototype of its own`];
  return plainKeyProblems(world, given, result.ok, matchedBefore);
}

function run(things: Collection, given: PathOperation): Promise<unknown> {
  switch (given.kind) {
    case 'insertOne':
      return things.insertOne(given.document);
    case 'insertMany':
      return things.insertMany(given.documents);
    case 'find':
      return readCursor(things, given).toArray();
    case 'findOne':
      return things.findOne(given.filter, { sort: given.sort, projection: given.projection });
    case 'countDocuments':
      return things.countDocuments(given.filter);
    case 'deleteMany':
      return things.deleteMany(given.filter);
    case 'updateOne':
      return things.updateOne(given.filter, given.update);
    case 'updateMany':
      return things.updateMany(given.filter, given.update);
  }
}

function readCursor(things: Collection, { filter: query, sort: order, projection: shape }: Read) {
  const cursor = things.find(query);
  if (order !== undefined) cursor.sort(order);
  return shape === undefined ? cursor : cursor.project(shape);
}

/**
 * What a successful operation must show when every key is ordinary: inserted documents read back
 * whole, each `$set` path holds its value and each `$unset` path is gone in every document
 * updateMany matched, and a projection keeps (or drops) exactly the own values at its paths.
 */
async function plainKeyProblems(world: PathWorld, given: PathOperation, answer: unknown, matchedBefore: Outcome | undefined): Promise<string[]> {
  if (given.kind === 'insertOne' || given.kind === 'insertMany') {
    const inserted = given.kind === 'insertOne' ? [given.document] : given.documents;
    const found = await byId(world, inserted.map((each) => each._id as string));
    return inserted.filter((each) => !isDeepStrictEqual(found.get(each._id as string), JSON.parse(JSON.stringify(each)))).map((each) => `${JSON.stringify(each)} reads back as ${JSON.stringify(found.get(each._id as string))}`);
  }
  if (given.kind === 'updateMany' && matchedBefore !== undefined && 'ok' in matchedBefore) {
    const found = await byId(world, (matchedBefore.ok as Array<{ _id: string }>).map((each) => each._id));
    return [...found.values()].flatMap((updated) => updateProblems(updated, given.update));
  }
  if (given.kind === 'find' && given.projection !== undefined) {
    const whole = await byId(world, (answer as Array<{ _id: string }>).map((each) => each._id));
    return (answer as Array<Record<string, unknown>>).flatMap((projected) => projectionProblems(projected, whole.get(projected._id as string), given.projection as Record<string, 0 | 1>));
  }
  return [];
}

function updateProblems(updated: Record<string, unknown>, { $set = {}, $unset = {} }: Update): string[] {
  const problems = Object.entries($set).filter(([path, given]) => !isDeepStrictEqual(ownValueAt(updated, path), given)).map(([path]) => `$set "${path}" left ${JSON.stringify(updated)}`);
  return problems.concat(Object.keys($unset).filter((path) => ownValueAt(updated, path) !== undefined).map((path) => `$unset "${path}" left ${JSON.stringify(updated)}`));
}

function projectionProblems(projected: Record<string, unknown>, whole: Record<string, unknown> | undefined, shape: Record<string, 0 | 1>): string[] {
  return Object.entries(shape)
    .filter(([path, flag]) => (flag === 0 ? ownValueAt(projected, path) !== undefined : !isDeepStrictEqual(ownValueAt(projected, path), ownValueAt(whole ?? {}, path))))
    .map(([path, flag]) => `projection {"${path}": ${flag}} gave ${JSON.stringify(projected)} of ${JSON.stringify(whole)}`);
}

/** The value at a dotted path through own properties of plain objects only (the test's own reading, not the store's). */
function ownValueAt(document: unknown, path: string): unknown {
  let current = document;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** True when a path or a key anywhere in the operation's input has the segment `__proto__`. */
function mentionsRefusedKey(input: unknown): boolean {
  if (input === null || typeof input !== 'object') return false;
  return Object.entries(input).some(([key, inner]) => key.split('.').includes(REFUSED_KEY) || mentionsRefusedKey(inner));
}

type Outcome = { ok: unknown } | { error: unknown };

function outcome(work: () => Promise<unknown>): Promise<Outcome> {
  return work().then((ok) => ({ ok }), (error: unknown) => ({ error }));
}

function inStore<Result>(world: PathWorld, work: (things: Collection) => Promise<Result>): Promise<Result> {
  return runInTenant(world.service.runtime, TENANT, () => work(db.collection(COLLECTION)));
}

async function byId(world: PathWorld, ids: string[]): Promise<Map<string, Record<string, unknown>>> {
  const rows = await world.service.runtime.knex('documents').where({ tenant: TENANT, collection: COLLECTION }).whereIn('id', ids).select<Array<{ id: string; doc: Record<string, unknown> }>>('id', 'doc');
  return new Map(rows.map((row) => [row.id, row.doc]));
}

/** The collection's rows as PostgreSQL's text, in a fixed order. */
function storedRows(world: PathWorld): Promise<unknown[]> {
  return world.service.runtime.knex('documents').where({ tenant: TENANT, collection: COLLECTION }).select('id', world.service.runtime.knex.raw('doc::text as doc')).orderBy('id');
}

/** Replaces the collection's rows, as the table's owner, with the documents exactly as given. */
async function replaceRows(world: PathWorld, documents: Array<Record<string, unknown>>): Promise<void> {
  const rows = documents.map((each) => ({ tenant: TENANT, collection: COLLECTION, id: each._id, doc: JSON.stringify(each) }));
  await world.service.runtime.knex.transaction(async (transaction) => {
    await transaction('documents').where({ tenant: TENANT, collection: COLLECTION }).delete();
    if (rows.length > 0) await transaction('documents').insert(rows);
  });
}
