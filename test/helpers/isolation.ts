import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { documentStore, type Collection } from '../../lib/documents/index.ts';
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

/** Both worlds; the service's view of each goes through `route` when given (a pooler). */
export async function isolationWorlds(route?: TenantDatabaseRoute): Promise<IsolationWorlds> {
  const [shared, alone] = await Promise.all([migratedDatabase(['alpha', 'beta'], route), migratedDatabase(['beta'], route)]);
  return { shared, alone, close: async () => void (await Promise.all([shared.close(), alone.close()])) };
}

type Documents = Array<Record<string, unknown>>;

export interface IsolationCase {
  alphaNotes: Documents;
  alphaOthers: Documents;
  betaNotes: Documents;
  betaOthers: Documents;
  filter: unknown;
  options: { sort?: Record<string, 1 | -1>; skip?: number; limit?: number; projection?: Record<string, 0 | 1> };
  update: { $set: Record<string, unknown>; $unset?: Record<string, unknown> };
}

export const isolationCase: fc.Arbitrary<IsolationCase> = fc.record({
  alphaNotes: collectionDocuments,
  alphaOthers: collectionDocuments,
  betaNotes: collectionDocuments,
  betaOthers: collectionDocuments,
  filter,
  options: findOptions,
  update,
});

/** Operations run per case, for the closing count. */
export const OPERATIONS_PER_CASE = 8;

const WRITES = new Set(['updateOne', 'updateMany', 'deleteOne', 'deleteMany']);

/** Seeds both worlds, runs every operation as beta in each, and throws at the first difference. */
export async function checkIsolation(worlds: IsolationWorlds, example: IsolationCase): Promise<void> {
  await Promise.all([
    seed(worlds.shared, { alpha: { notes: example.alphaNotes, others: example.alphaOthers }, beta: { notes: example.betaNotes, others: example.betaOthers } }),
    seed(worlds.alone, { beta: { notes: example.betaNotes } }),
  ]);
  const neighbours = await rowsOf(worlds.shared, "tenant <> 'beta' or collection <> 'notes'", ['created_at', 'account_username']);
  const shared = documentStore(worlds.shared.tenantDatabase, 'beta').collection('notes');
  const alone = documentStore(worlds.alone.tenantDatabase, 'beta').collection('notes');
  const { filter: query, options } = example;
  const operations: Array<[string, (notes: Collection) => Promise<unknown>]> = [
    ['find', (notes) => cursorOf(notes, query, options).toArray()],
    ['find (plain)', (notes) => notes.find(query as Record<string, unknown>).toArray()],
    ['findOne', (notes) => notes.findOne(query as Record<string, unknown>, { sort: options.sort, skip: options.skip, projection: options.projection })],
    ['countDocuments', (notes) => notes.countDocuments(query as Record<string, unknown>)],
    ['updateOne', (notes) => notes.updateOne(query as Record<string, unknown>, example.update)],
    ['updateMany', (notes) => notes.updateMany(query as Record<string, unknown>, example.update)],
    ['deleteOne', (notes) => notes.deleteOne(query as Record<string, unknown>)],
    ['deleteMany', (notes) => notes.deleteMany(query as Record<string, unknown>)],
  ];
  for (const [name, operation] of operations) {
    const [inShared, inAlone] = await Promise.all([outcomeOf(() => operation(shared)), outcomeOf(() => operation(alone))]);
    if (!isDeepStrictEqual(inShared, inAlone)) throw new Error(`${name} differs beside another tenant: ${JSON.stringify(inShared)} vs alone ${JSON.stringify(inAlone)}`);
    if (!WRITES.has(name)) continue;
    const [betaShared, betaAlone] = await Promise.all([rowsOf(worlds.shared, "tenant = 'beta' and collection = 'notes'"), rowsOf(worlds.alone, 'true')]);
    if (!isDeepStrictEqual(betaShared, betaAlone)) throw new Error(`after ${name}, beta's notes differ beside another tenant`);
  }
  if (!isDeepStrictEqual(await rowsOf(worlds.shared, "tenant <> 'beta' or collection <> 'notes'", ['created_at', 'account_username']), neighbours)) {
    throw new Error("another tenant's rows (or beta's other collection) changed");
  }
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
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

/** Replaces every row of the database with the given documents, as the owner (no row-level security). */
async function seed(database: MigratedDatabase, tenants: Record<string, Record<string, Documents>>): Promise<void> {
  const rows = Object.entries(tenants).flatMap(([tenant, collections]) =>
    Object.entries(collections).flatMap(([collection, documents]) => documents.map((doc) => ({ tenant, collection, id: doc._id, doc: JSON.stringify(doc) }))),
  );
  await database.knex.transaction(async (transaction) => {
    await transaction('documents').delete();
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
