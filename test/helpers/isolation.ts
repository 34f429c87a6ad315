import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { documentStore, type Collection, type DocumentStore, type Filter, type UpdateSpec } from '../../lib/documents/index.ts';
import { DeclaredIndexPaths } from '../../lib/documents/declared-index-paths.ts';
import { useDeclaredIndexes } from '../../lib/documents/declared-paths.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { declaredPath, type IndexDeclaration } from '../../lib/documents/index-keys.ts';
import { collectionDocuments, filter, findOptions, update } from './filters.ts';
import { migratedDatabase, type MigratedDatabase, type TenantDatabaseRoute } from './database.ts';

/**
 * The isolation property as a differential test. Two databases: in `shared`, tenants alpha and
 * beta hold overlapping documents (same `_id`s, same fields) in two collections; in `alone`,
 * beta holds only its `notes`. Every operation beta makes must give in `shared` exactly what
 * it gives in `alone` (the neighbours change nothing), and alpha's rows and beta's other
 * collection must be byte-for-byte what they were.
 */
export interface IsolationWorlds {
  readonly shared: MigratedDatabase;
  readonly alone: MigratedDatabase;
  close(): Promise<void>;
}

/**
 * Indexes declared on `notes` in both worlds, so that finds on these paths take the declared
 * reads too: the one that assumes no arrays (and proves it in `document_array_paths`, where the
 * other tenant's arrays must not count), and the one with the recheck.
 */
const DECLARED: IndexDeclaration[] = ['n', 'a.b', 'tags'].map((path) => ({ project: 'isolation', collection: 'notes', fields: [{ path: declaredPath(path), direction: 1 }], unique: false }));
const quietLog = { info: () => {}, warn: () => {}, error: () => {} };

/** Both worlds; the service's view of each goes through `route` when given (a pooler). */
export async function isolationWorlds(route?: TenantDatabaseRoute): Promise<IsolationWorlds> {
  const [shared, alone] = await Promise.all([migratedDatabase(['alpha', 'beta'], route), migratedDatabase(['beta'], route)]);
  await Promise.all([shared, alone].map((world) => buildDeclaredIndexes(world.url, DECLARED, quietLog).done));
  return { shared, alone, close: async () => void (await Promise.all([shared.close(), alone.close()])) };
}

/** The declared paths as a process that just started holds them: nothing learned about arrays yet. */
function freshDeclaredPaths(): DeclaredIndexPaths {
  const paths = new DeclaredIndexPaths();
  useDeclaredIndexes(paths, DECLARED);
  return paths;
}

type Documents = Array<Record<string, unknown>>;

export interface IsolationCase {
  alphaNotes: Documents;
  alphaOthers: Documents;
  betaNotes: Documents;
  betaOthers: Documents;
  filter: unknown;
  options: { sort?: Record<string, 1 | -1>; skip?: number; limit?: number; projection?: Record<string, 0 | 1> };
  update: UpdateSpec;
  /** The `_id` an upsert takes: one both tenants may hold, or a new one. */
  upsertId: string;
  returnDocument: 'before' | 'after';
  /** Whether the transaction throws at its end (so rolls back). */
  rollback: boolean;
}

export const isolationCase: fc.Arbitrary<IsolationCase> = fc.record({
  alphaNotes: collectionDocuments,
  alphaOthers: collectionDocuments,
  betaNotes: collectionDocuments,
  betaOthers: collectionDocuments,
  filter,
  options: findOptions,
  update,
  upsertId: fc.constantFrom('d0', 'd3', 'new'),
  returnDocument: fc.constantFrom('before', 'after'),
  rollback: fc.boolean(),
});

/** Operations run per case, for the closing count. */
export const OPERATIONS_PER_CASE = 12;

const WRITES = new Set(['updateOne', 'updateMany', 'updateOne (upsert)', 'updateMany (upsert)', 'findOneAndUpdate', 'transaction', 'deleteOne', 'deleteMany']);

/** Seeds both worlds, runs every operation as beta in each, and throws at the first difference. */
export async function checkIsolation(worlds: IsolationWorlds, example: IsolationCase): Promise<void> {
  await Promise.all([
    seed(worlds.shared, { alpha: { notes: example.alphaNotes, others: example.alphaOthers }, beta: { notes: example.betaNotes, others: example.betaOthers } }),
    seed(worlds.alone, { beta: { notes: example.betaNotes } }),
  ]);
  const neighbours = await rowsOf(worlds.shared, "tenant <> 'beta' or collection <> 'notes'", ['created_at', 'account_username']);
  const sharedStore = documentStore(worlds.shared.tenantDatabase, 'beta', freshDeclaredPaths());
  const aloneStore = documentStore(worlds.alone.tenantDatabase, 'beta', freshDeclaredPaths());
  const { filter: query, options, update } = example;
  const filter = query as Filter;
  // An upsert inserts an `_id` of its own choosing when the filter gives none: this one gives it, so both worlds insert alike.
  const upsertFilter = { $and: [filter, { _id: example.upsertId }] };
  const operations: Array<[string, (notes: Collection, store: DocumentStore) => Promise<unknown>]> = [
    ['find', (notes) => cursorOf(notes, query, options).toArray()],
    ['find (plain)', (notes) => notes.find(filter).toArray()],
    ['findOne', (notes) => notes.findOne(filter, { sort: options.sort, skip: options.skip, projection: options.projection })],
    ['countDocuments', (notes) => notes.countDocuments(filter)],
    ['updateOne', (notes) => notes.updateOne(filter, update)],
    ['updateMany', (notes) => notes.updateMany(filter, update)],
    ['updateOne (upsert)', (notes) => notes.updateOne(upsertFilter, update, { upsert: true })],
    ['updateMany (upsert)', (notes) => notes.updateMany(upsertFilter, update, { upsert: true })],
    ['findOneAndUpdate', (notes) => notes.findOneAndUpdate(filter, update, { sort: options.sort, returnDocument: example.returnDocument })],
    ['transaction', (_notes, store) => inTransaction(store, example, upsertFilter)],
    ['deleteOne', (notes) => notes.deleteOne(filter)],
    ['deleteMany', (notes) => notes.deleteMany(filter)],
  ];
  const shared = sharedStore.collection('notes');
  const alone = aloneStore.collection('notes');
  for (const [name, operation] of operations) {
    const [inShared, inAlone] = await Promise.all([outcomeOf(() => operation(shared, sharedStore)), outcomeOf(() => operation(alone, aloneStore))]);
    if (!isDeepStrictEqual(inShared, inAlone)) throw new Error(`${name} differs beside another tenant: ${JSON.stringify(inShared)} vs alone ${JSON.stringify(inAlone)}`);
    if (!WRITES.has(name)) continue;
    const [betaShared, betaAlone] = await Promise.all([rowsOf(worlds.shared, "tenant = 'beta' and collection = 'notes'"), rowsOf(worlds.alone, 'true')]);
    if (!isDeepStrictEqual(betaShared, betaAlone)) throw new Error(`after ${name}, beta's notes differ beside another tenant`);
  }
  if (!isDeepStrictEqual(await rowsOf(worlds.shared, "tenant <> 'beta' or collection <> 'notes'", ['created_at', 'account_username']), neighbours)) {
    throw new Error("another tenant's rows (or beta's other collection) changed");
  }
}

/** Reads and writes of one transaction, which rolls back when the case says so: what it saw is the outcome. */
async function inTransaction(store: DocumentStore, example: IsolationCase, upsertFilter: Filter): Promise<unknown> {
  const seen: unknown[] = [];
  const filter = example.filter as Filter;
  try {
    await store.transaction(async (tx) => {
      const notes = tx.collection('notes');
      seen.push(await notes.find(filter).sort({ _id: 1 }).toArray());
      seen.push(await notes.updateMany(filter, example.update));
      seen.push(await notes.updateOne(upsertFilter, { $inc: { count: 1 } }, { upsert: true }));
      seen.push(await notes.findOneAndUpdate({}, { $push: { log: 'tx' } }, { returnDocument: 'after' }));
      seen.push(await notes.find({}).sort({ _id: 1 }).toArray());
      seen.push(await notes.deleteOne(filter));
      if (example.rollback) throw new Error('rolled back on purpose');
    });
  } catch (error) {
    seen.push(`${(error as Error).name}: ${withoutTheValueMet((error as Error).message)}`);
  }
  return seen;
}

function cursorOf(notes: Collection, query: unknown, options: IsolationCase['options']) {
  const cursor = notes.find(query as Record<string, unknown>);
  if (options.sort !== undefined) cursor.sort(options.sort);
  if (options.skip !== undefined) cursor.skip(options.skip);
  if (options.limit !== undefined) cursor.limit(options.limit);
  return options.projection === undefined ? cursor : cursor.project(options.projection);
}

type Outcome = { ok: unknown } | { error: string };

async function outcomeOf(operation: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await operation() };
  } catch (error) {
    return { error: `${(error as Error).name}: ${withoutTheValueMet((error as Error).message)}` };
  }
}

/**
 * An update refused for a value (`$push: "tags" holds a null, not an array`, `cannot create field
 * "n.x": "n" is not an object`) names the first refused document PostgreSQL met. Which one that
 * is follows the plan, which the other tenant's rows change through the table's statistics (an
 * index scan or a sequential one): the outcome keeps that the update was refused, not for which
 * value. Whether it is refused, and the rows after it, must still match.
 */
const REFUSED_FOR_A_VALUE = /\$\w+: "[^"]*" (holds an? \w+, not an? \w+|would overflow)|cannot create field "[^"]*": "[^"]*" is not an object/g;

function withoutTheValueMet(message: string): string {
  return message.replace(REFUSED_FOR_A_VALUE, 'an update refused for the value of the first document it met');
}


/**
 * Replaces every row of the database with the given documents, as the owner (no row-level
 * security); the record of arrays starts again from them.
 */
async function seed(database: MigratedDatabase, tenants: Record<string, Record<string, Documents>>): Promise<void> {
  const rows = Object.entries(tenants).flatMap(([tenant, collections]) =>
    Object.entries(collections).flatMap(([collection, documents]) => documents.map((doc) => ({ tenant, collection, id: doc._id, doc: JSON.stringify(doc) }))),
  );
  await database.knex.transaction(async (transaction) => {
    await transaction('documents').delete();
    await transaction('document_array_paths').delete();
    if (rows.length > 0) await transaction('documents').insert(rows);
  });
}

/**
 * Rows exactly as stored (the document as PostgreSQL's text), in a fixed order. The time of
 * insertion is compared only within one database: the two worlds insert at different instants.
 */
async function rowsOf(database: MigratedDatabase, where: string, columns: string[] = []): Promise<unknown[]> {
  return database.knex('documents').whereRaw(where).select('tenant', 'collection', 'id', database.knex.raw('doc::text as doc'), ...columns).orderBy(['tenant', 'collection', 'id']);
}
