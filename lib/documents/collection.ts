import type { Knex } from 'knex';
import { tenantRows, type TenantScope } from '../tenancy/scope.ts';
import { sql, statementOf, type Statement } from '../db/statement.ts';
import { countStatement, DOCUMENTS as TABLE, insertBatches, insertStatement, selectStatement } from './statements.ts';
import { FindCursor, wholeNumber, type CursorQuery } from './cursor.ts';
import { DocumentQueryError, translateWriteError } from './errors.ts';
import { declaredPathsOf } from './declared-paths.ts';
import { branchedSelectStatement } from './declared-select.ts';
import { compileFilter } from './filter.ts';
import { newDocumentId } from './ids.ts';
import { compileProjection } from './projection.ts';
import { compileSort } from './sort.ts';
import type { DeleteResult, Document, Filter, InsertManyResult, InsertOneResult, ProjectionSpec, SortSpec, SqlFragment, UpdateResult, UpdateSpec } from './types.ts';
import { applyUpdate, compileUpdate, documentChanged } from './update.ts';
import { isPlainObject } from '../values/json.ts';
import { isStorableText } from '../values/storable-text.ts';
import { toStorableValue } from './values.ts';

/** The database and tenant one operation runs against. */
export type StoreScope = TenantScope;

export interface FindOneOptions {
  sort?: SortSpec;
  skip?: number;
  projection?: ProjectionSpec;
}

const MAX_NAME_LENGTH = 128;

/**
 * One collection of one tenant's documents (SPEC §9). The scope is resolved at each operation,
 * so a collection taken from `db` follows the request it is used in.
 */
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

  /** The tenant's rows of this collection that match `filter`: every statement starts here. */
  #matching(tenant: string, filter: Filter | undefined): Knex.QueryBuilder {
    return tenantRows(TABLE, tenant, this.#inCollection, compileFilter(filter, this.collectionName));
  }

  find(filter: Filter = {}): FindCursor {
    return new FindCursor((query) => this.#select(filter, query));
  }

  async findOne(filter: Filter = {}, options: FindOneOptions = {}): Promise<Document | null> {
    const skip = options.skip === undefined || options.skip === 0 ? undefined : wholeNumber('skip', options.skip);
    // Checked before the query, as find's cursor does: a bad projection fails whether or not a document matches.
    const projector = compileProjection(options.projection);
    const [document] = await this.#select(filter, { sort: options.sort, skip, limit: 1 });
    if (document === undefined) return null;
    return projector ? (projector(document) as Document) : document;
  }

  async countDocuments(filter: Filter = {}): Promise<number> {
    const { database, tenant } = this.#resolveScope();
    const where = compileFilter(filter, this.collectionName, declaredPathsOf(database, this.collectionName));
    const { rows: [counted] } = await database.query<{ count: string }>(tenant, countStatement(tenant, [this.#inCollection, where]));
    return Number(counted?.count ?? 0);
  }

  async insertOne(document: Record<string, unknown>): Promise<InsertOneResult> {
    const { insertedIds } = await this.#insert([document]);
    return { acknowledged: true, insertedId: insertedIds[0] as string };
  }

  async insertMany(documents: Array<Record<string, unknown>>): Promise<InsertManyResult> {
    if (!Array.isArray(documents) || documents.length === 0) throw new DocumentQueryError('insertMany needs a non-empty array of documents');
    return this.#insert(documents);
  }

  updateOne(filter: Filter, update: UpdateSpec): Promise<UpdateResult> {
    return this.#update(filter, update, 1);
  }

  updateMany(filter: Filter, update: UpdateSpec): Promise<UpdateResult> {
    return this.#update(filter, update, undefined);
  }

  async deleteOne(filter: Filter): Promise<DeleteResult> {
    const { database, tenant } = this.#resolveScope();
    const first = this.#matching(tenant, filter).select('id').orderBy('id').limit(1);
    const deleting = tenantRows(TABLE, tenant, this.#inCollection).whereIn('id', first).del();
    const { rowCount } = await database.query(tenant, statementOf(deleting));
    return { acknowledged: true, deletedCount: rowCount ?? 0 };
  }

  async deleteMany(filter: Filter): Promise<DeleteResult> {
    const { database, tenant } = this.#resolveScope();
    const { rowCount } = await database.query(tenant, statementOf(this.#matching(tenant, filter).del()));
    return { acknowledged: true, deletedCount: rowCount ?? 0 };
  }

  async #select(filter: Filter, { sort, skip, limit }: CursorQuery): Promise<Document[]> {
    const { database, tenant } = this.#resolveScope();
    const declared = declaredPathsOf(database, this.collectionName);
    const branches = declared?.branches(filter, sort, (part) => compileFilter(part, this.collectionName));
    const where = branches === undefined ? compileFilter(filter, this.collectionName, declared) : undefined;
    const order = compileSort(sort, declared);
    const page = { order, skip, limit };
    const statement = where === undefined ? branchedSelectStatement(tenant, this.#inCollection, branches ?? [], page) : selectStatement(tenant, [this.#inCollection, where], page);
    const { rows: found } = await database.query<{ doc: Document }>(tenant, statement);
    return found.map((row) => row.doc);
  }

  /** Every document or none: one statement per batch, several batches in one transaction. */
  async #insert(documents: Array<Record<string, unknown>>): Promise<InsertManyResult> {
    const prepared = documents.map(toStoredDocument);
    const { database, tenant, stillWanted } = this.#resolveScope();
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

  /** Reads the matching rows under lock, applies the update, and writes back only real changes. */
  async #update(filter: Filter, update: UpdateSpec, limit: number | undefined): Promise<UpdateResult> {
    const compiled = compileUpdate(update);
    const { database, tenant, stillWanted } = this.#resolveScope();
    const locking = this.#matching(tenant, filter).select('id', 'doc').orderBy('id').forUpdate();
    if (limit !== undefined) locking.limit(limit);
    try {
      return await database.transaction(tenant, async (run) => {
        const { rows } = (await run(statementOf(locking))) as { rows: Array<{ id: string; doc: Document }> };
        const changed = rows.map((row) => ({ before: row.doc, after: applyUpdate(row.doc, compiled) })).filter(({ before, after }) => documentChanged(before, after));
        if (changed.length > 0) {
          const byId = JSON.stringify(Object.fromEntries(changed.map(({ after }) => [after._id, after])));
          const writing = tenantRows(TABLE, tenant, this.#inCollection)
            .whereRaw('id = any(?::text[])', [changed.map(({ after }) => after._id)])
            .update({ doc: sql.raw('?::jsonb -> id', [byId]) });
          await run(statementOf(writing));
        }
        return { acknowledged: true, matchedCount: rows.length, modifiedCount: changed.length, upsertedCount: 0, upsertedId: null };
      }, stillWanted);
    } catch (error) {
      throw translateWriteError(error, this.collectionName);
    }
  }
}

/** A plain JSON copy of `document` with a string `_id` (generated when absent). */
function toStoredDocument(document: unknown): Document {
  if (!isPlainObject(document)) throw new DocumentQueryError('a document must be a plain object');
  const stored = toStorableValue(document, 'document') as Record<string, unknown>;
  const id = stored._id ?? newDocumentId();
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_NAME_LENGTH) {
    throw new DocumentQueryError(`_id must be a string of 1 to ${MAX_NAME_LENGTH} characters`);
  }
  return { ...stored, _id: id };
}
