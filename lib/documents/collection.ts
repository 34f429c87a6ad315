import type { Knex } from 'knex';
import type { QueryResult } from 'pg';
import { tenantRows, type TenantScope } from '../tenancy/scope.ts';
import { statementOf, type Statement } from '../db/statement.ts';
import { countStatement, DOCUMENTS as TABLE, insertBatches, insertStatement, selectStatement, type DocumentShapes } from './statements.ts';
import { FindCursor, wholeNumber, type CursorQuery } from './cursor.ts';
import { DeclaredPathsHoldArrays, DocumentQueryError, DuplicateKeyError, translateWriteError, UnguardedWriteError } from './errors.ts';
import { branchedSelectStatement } from './declared-select.ts';
import { checkFilterBounds } from './bounds.ts';
import { compileFilter } from './filter.ts';
import { newDocumentId } from './ids.ts';
import { compileProjection } from './projection.ts';
import { compileSort } from './sort.ts';
import { explainStatement, findPlan, type FindPlan } from './plan.ts';
import type { DeclaredPaths, DeleteResult, Document, Filter, FindOneAndUpdateOptions, FindOptions, InsertManyResult, InsertOneResult, SortSpec, SqlFragment, UpdateOptions, UpdateResult, UpdateSpec } from './types.ts';
import { compileUpdate, operationsJson, type CompiledUpdate } from './update.ts';
import { updateStatement, type UpdateOutcome, type UpdatePlan } from './update-statement.ts';
import { upsertSeed } from './upsert.ts';
import { booleanOption, checkedOptions } from './options.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import { isPlainObject } from '../values/json.ts';
import { isStorableText } from '../values/storable-text.ts';
import { toStorableValue } from './values.ts';

/** What runs a collection's statements: the tenant database, or one transaction's connection (transaction.ts). */
export type StoreDatabase = Pick<TenantDatabase, 'query' | 'transaction'>;

/** `inTransaction`: a failed statement fails the transaction, so reads never assume no arrays on declared paths (`#read`). */
export type StoreScope = Omit<TenantScope, 'database' | 'documentShapes'> & { readonly database: StoreDatabase; readonly documentShapes: DocumentShapes; readonly inTransaction?: boolean };

export type FindOneOptions = Omit<FindOptions, 'limit'>;

const FIND_ONE_OPTIONS: Array<keyof FindOneOptions> = ['sort', 'skip', 'projection'];
const FIND_OPTIONS: Array<keyof FindOptions> = ['sort', 'skip', 'limit', 'projection'];
const UPDATE_OPTIONS: Array<keyof UpdateOptions> = ['upsert'];
const FIND_ONE_AND_UPDATE_OPTIONS: Array<keyof FindOneAndUpdateOptions> = ['returnDocument', 'upsert', 'sort', 'projection'];
const NO_OPTIONS: never[] = [];

/** How often an upsert that lost a race for a unique key runs again, now as an update. */
const UPSERT_ATTEMPTS = 2;

const MAX_NAME_LENGTH = 128;

/** One collection of one tenant's documents (SPEC §9); the scope is resolved at each operation, so a collection taken from `db` follows its request. */
export class Collection {
  readonly collectionName: string;
  readonly #resolveScope: () => StoreScope;
  readonly #inCollection: SqlFragment;

  constructor(name: string, resolveScope: () => StoreScope) {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH || !isStorableText(name)) {
      throw new TypeError(`a collection name must be a string of 1 to ${MAX_NAME_LENGTH} characters, without NUL or unpaired surrogates`);
    }
    this.collectionName = name;
    this.#resolveScope = resolveScope;
    this.#inCollection = { sql: 'collection = ?', bindings: [name] };
  }

  #matching(tenant: string, filter: Filter | undefined): Knex.QueryBuilder {
    checkFilterBounds(filter);
    return tenantRows(TABLE, tenant, this.#inCollection, compileFilter(filter, this.collectionName));
  }

  /** `options` are the cursor's (`sort`, `skip`, `limit`, `projection`), as the driver takes them too. */
  find(filter: Filter = {}, options?: FindOptions): FindCursor {
    const { sort, skip, limit, projection } = checkedOptions<FindOptions>('find', options, FIND_OPTIONS);
    const cursor = new FindCursor((query) => this.#select(filter, query), (query) => this.#explain(filter, query));
    if (sort !== undefined) cursor.sort(sort);
    if (skip !== undefined) cursor.skip(skip);
    if (limit !== undefined) cursor.limit(limit);
    return projection === undefined ? cursor : (cursor.project(projection) as unknown as FindCursor);
  }

  async findOne(filter: Filter = {}, options?: FindOneOptions): Promise<Document | null> {
    const { sort, skip: given, projection } = checkedOptions<FindOneOptions>('findOne', options, FIND_ONE_OPTIONS);
    const skip = given === undefined || given === 0 ? undefined : wholeNumber('skip', given);
    // Checked before the query, as find's cursor does: a bad projection fails whether or not a document matches.
    const projector = compileProjection(projection);
    const [document] = await this.#select(filter, { sort, skip, limit: 1 });
    if (document === undefined) return null;
    return projector ? (projector(document) as Document) : document;
  }

  async countDocuments(filter: Filter = {}, options?: Record<string, never>): Promise<number> {
    checkedOptions('countDocuments', options, NO_OPTIONS);
    checkFilterBounds(filter);
    const scope = this.#resolveScope();
    const { database, tenant, documentShapes } = scope;
    const { rows: [counted] } = await this.#read(scope, (declared) => {
      const where = compileFilter(filter, this.collectionName, declared);
      return this.#query<{ count: string }>(database, tenant, countStatement(tenant, [this.#inCollection, where], documentShapes.reads));
    });
    return Number(counted?.count ?? 0);
  }

  async insertOne(document: Record<string, unknown>, options?: Record<string, never>): Promise<InsertOneResult> {
    checkedOptions('insertOne', options, NO_OPTIONS);
    const { insertedIds } = await this.#insert([document]);
    return { acknowledged: true, insertedId: insertedIds[0] as string };
  }

  async insertMany(documents: Array<Record<string, unknown>>, options?: Record<string, never>): Promise<InsertManyResult> {
    checkedOptions('insertMany', options, NO_OPTIONS);
    if (!Array.isArray(documents) || documents.length === 0) throw new DocumentQueryError('insertMany needs a non-empty array of documents');
    return this.#insert(documents);
  }

  /** Updates the first matching document (by `_id`); `{upsert: true}` inserts one when none matches. */
  updateOne(filter: Filter, update: UpdateSpec, options?: UpdateOptions): Promise<UpdateResult> {
    return this.#updateWithResult('updateOne', filter, update, options, 1);
  }

  updateMany(filter: Filter, update: UpdateSpec, options?: UpdateOptions): Promise<UpdateResult> {
    return this.#updateWithResult('updateMany', filter, update, options, undefined);
  }

  /**
   * Updates the first matching document (in `sort` order, else by `_id`) and returns it as it
   * was (`returnDocument: 'before'`, the default) or became (`'after'`), or null when none
   * matched: one statement, so two concurrent callers never get the same document when the
   * update makes it stop matching (an atomic claim).
   */
  async findOneAndUpdate(filter: Filter, update: UpdateSpec, options?: FindOneAndUpdateOptions): Promise<Document | null> {
    const method = 'findOneAndUpdate';
    const given = checkedOptions<FindOneAndUpdateOptions>(method, options, FIND_ONE_AND_UPDATE_OPTIONS);
    const returnDocument = given.returnDocument ?? 'before';
    if (returnDocument !== 'before' && returnDocument !== 'after') throw new DocumentQueryError(`${method}: option "returnDocument" must be "before" or "after"`);
    const projector = compileProjection(given.projection);
    const outcome = await this.#update(filter, update, { limit: 1, sort: given.sort, upsert: booleanOption(method, 'upsert', given.upsert), returnDocuments: true });
    const document = returnDocument === 'before' ? outcome.before : (outcome.after ?? outcome.upserted);
    if (document === null) return null;
    return projector ? (projector(document) as Document) : document;
  }

  async deleteOne(filter: Filter, options?: Record<string, never>): Promise<DeleteResult> {
    checkedOptions('deleteOne', options, NO_OPTIONS);
    const { database, tenant } = this.#resolveScope();
    const first = this.#matching(tenant, filter).select('id').orderBy('id').limit(1);
    const deleting = tenantRows(TABLE, tenant, this.#inCollection).whereIn('id', first).del();
    const { rowCount } = await this.#query(database, tenant, statementOf(deleting));
    return { acknowledged: true, deletedCount: rowCount ?? 0 };
  }

  async deleteMany(filter: Filter, options?: Record<string, never>): Promise<DeleteResult> {
    checkedOptions('deleteMany', options, NO_OPTIONS);
    const { database, tenant } = this.#resolveScope();
    const { rowCount } = await this.#query(database, tenant, statementOf(this.#matching(tenant, filter).del()));
    return { acknowledged: true, deletedCount: rowCount ?? 0 };
  }

  async #query<Row extends Record<string, unknown>>(database: StoreDatabase, tenant: string, statement: Statement): Promise<QueryResult<Row>> {
    try {
      return await database.query<Row>(tenant, statement);
    } catch (error) {
      throw translateWriteError(error, this.collectionName);
    }
  }

  async #select(filter: Filter, query: CursorQuery): Promise<Document[]> {
    checkFilterBounds(filter);
    const scope = this.#resolveScope();
    const { database, tenant } = scope;
    const { rows: found } = await this.#read(scope, (declared) => this.#query<{ doc: Document }>(database, tenant, this.#selectStatement(scope, declared, filter, query)));
    return found.map((row) => row.doc);
  }

  /** The plan of the statement `#select` sends first, from PostgreSQL's EXPLAIN: nothing runs. */
  async #explain(filter: Filter, query: CursorQuery): Promise<FindPlan> {
    checkFilterBounds(filter);
    const scope = this.#resolveScope();
    const { database, tenant } = scope;
    const { rows } = await this.#read(scope, (declared) => this.#query(database, tenant, explainStatement(this.#selectStatement(scope, declared, filter, query))));
    return findPlan(rows);
  }

  #selectStatement({ tenant, documentShapes }: StoreScope, declared: DeclaredPaths | undefined, filter: Filter, { sort, skip, limit }: CursorQuery): Statement {
    const legs = declared?.branches(filter, sort, (part) => compileFilter(part, this.collectionName)) ?? [compileFilter(filter, this.collectionName, declared)];
    const page = { order: compileSort(sort, declared), skip, limit };
    return legs.length > 1
      ? branchedSelectStatement(tenant, this.#inCollection, legs, page, documentShapes.branchedReads)
      : selectStatement(tenant, [this.#inCollection, legs[0] as SqlFragment], page, documentShapes.reads);
  }

  /**
   * Outside transactions, first assumes no arrays on declared paths where none was seen (one index read instead of
   * two); reads again with the recheck when the database shows some.
   */
  async #read<Result>({ tenant, declaredPaths, inTransaction }: StoreScope, run: (declared: DeclaredPaths | undefined) => Promise<Result>): Promise<Result> {
    const declared = declaredPaths?.of(this.collectionName);
    if (declared === undefined || inTransaction === true) return run(declared);
    try {
      return await run(declared.assumingNoArrays(tenant));
    } catch (error) {
      if (!(error instanceof DeclaredPathsHoldArrays)) throw error;
      declared.holdArrays(tenant, error.paths);
      return run(declared);
    }
  }

  /** Inserts and updates only: deletes go on, so that the documents breaking the index can be removed. */
  async #refuseUnguarded({ declaredPaths }: StoreScope): Promise<void> {
    const unbuilt = await declaredPaths?.unguarded(this.collectionName);
    if (unbuilt !== undefined) throw new UnguardedWriteError(this.collectionName, unbuilt.index);
  }

  /** Every document or none: one statement per batch, several batches in one transaction. */
  async #insert(documents: Array<Record<string, unknown>>): Promise<InsertManyResult> {
    const prepared = documents.map(toStoredDocument);
    const scope = this.#resolveScope();
    await this.#refuseUnguarded(scope);
    const { database, tenant, stillWanted } = scope;
    const statements = insertBatches(prepared).map((batch) => insertStatement(tenant, this.collectionName, batch));
    try {
      if (statements.length === 1) await database.query(tenant, statements[0] as Statement);
      else
        await database.transaction(
          tenant,
          async (run) => {
            for (const statement of statements) await run(statement);
          },
          stillWanted,
        );
    } catch (error) {
      throw translateWriteError(error, this.collectionName);
    }
    return { acknowledged: true, insertedCount: prepared.length, insertedIds: Object.fromEntries(prepared.map((document, index) => [index, document._id])) };
  }

  async #updateWithResult(method: string, filter: Filter, update: UpdateSpec, options: UpdateOptions | undefined, limit: number | undefined): Promise<UpdateResult> {
    const { upsert } = checkedOptions<UpdateOptions>(method, options, UPDATE_OPTIONS);
    const outcome = await this.#update(filter, update, { limit, sort: undefined, upsert: booleanOption(method, 'upsert', upsert), returnDocuments: false });
    if (outcome.upserted !== null) return { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: outcome.upserted._id };
    return { acknowledged: true, matchedCount: outcome.matched, modifiedCount: outcome.modified, upsertedCount: 0, upsertedId: null };
  }

  /**
   * An upsert whose insert met a concurrent one of the same unique key inserted nothing: it runs again and now
   * updates that document, as MongoDB retries; still nothing, and the key is a document the filter does not match.
   */
  async #update(filter: Filter, update: UpdateSpec, request: { limit: number | undefined; sort: SortSpec | undefined; upsert: boolean; returnDocuments: boolean }): Promise<UpdateOutcome> {
    const compiled = compileUpdate(update);
    const order = compileSort(request.sort);
    const scope = this.#resolveScope();
    await this.#refuseUnguarded(scope);
    const { database, tenant } = scope;
    const plan: UpdatePlan = {
      matching: this.#matching(tenant, filter),
      inCollection: this.#inCollection,
      order,
      limit: request.limit,
      operations: operationsJson(compiled),
      upsert: request.upsert ? { collection: this.collectionName, document: upsertDocument(filter, compiled) } : undefined,
      returnDocuments: request.returnDocuments,
    };
    const statement = updateStatement(tenant, plan);
    for (let attempt = 1; ; attempt++) {
      const { rows: [outcome] } = await this.#query<UpdateOutcome & Record<string, unknown>>(database, tenant, statement);
      if (outcome === undefined) throw new Error('an update statement answered no row');
      if (!request.upsert || outcome.matched > 0 || outcome.upserted !== null) return outcome;
      if (attempt >= UPSERT_ATTEMPTS) throw new DuplicateKeyError(`duplicate key: upsert into "${this.collectionName}" met a document with the same unique key that the filter does not match`);
    }
  }
}

/** The document an upsert inserts, before its update: the filter's equalities and an `_id`. */
function upsertDocument(filter: Filter, compiled: CompiledUpdate): Document {
  const seed = upsertSeed(filter);
  if (seed._id === undefined && compiled.setsId !== undefined) seed._id = compiled.setsId;
  return toStoredDocument(seed);
}

function toStoredDocument(document: unknown): Document {
  if (!isPlainObject(document)) throw new DocumentQueryError('a document must be a plain object');
  const stored = toStorableValue(document, 'document') as Record<string, unknown>;
  const id = stored._id ?? newDocumentId();
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_NAME_LENGTH) {
    throw new DocumentQueryError(`_id must be a string of 1 to ${MAX_NAME_LENGTH} characters`);
  }
  return { ...stored, _id: id };
}
