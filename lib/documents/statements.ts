import { sql, StatementShapes, statementOf, type SqlFragment, type Statement } from '../db/statement.ts';
import { tenantRows, tenantRowsShape } from '../tenancy/scope.ts';
import type { Document } from './types.ts';

/** The table of every collection's documents. */
export const DOCUMENTS = 'documents';

/** The reads every collection sends, by shape: built by knex once a shape, reused after. */
const readShapes = new StatementShapes();

/** What a read asks for besides its rows: the order (compiled sort), and a page. */
export interface ReadPage {
  readonly order: SqlFragment;
  readonly skip?: number;
  readonly limit?: number;
}

/** `select doc` of the tenant's rows matching `conditions` (the collection's and the filter's). */
export function selectStatement(tenant: string, conditions: readonly SqlFragment[], { order, skip: given, limit }: ReadPage, shapes = readShapes): Statement {
  // Knex writes no OFFSET for 0 (and a LIMIT for 0): the shape follows what it writes.
  const skip = given === 0 ? undefined : given;
  const rows = tenantRowsShape(tenant, ...conditions);
  const shape = `select ${rows.shape} order ${order.sql}${limit === undefined ? '' : ' limit'}${skip === undefined ? '' : ' offset'}`;
  const bindings = [...rows.bindings, ...order.bindings, ...(limit === undefined ? [] : [limit]), ...(skip === undefined ? [] : [skip])];
  return shapes.statement(shape, bindings, () => {
    const query = tenantRows(DOCUMENTS, tenant, ...conditions).select('doc').orderByRaw(order.sql, order.bindings);
    if (skip !== undefined) query.offset(skip);
    if (limit !== undefined) query.limit(limit);
    return query;
  });
}

/** `count(*)` of the tenant's rows matching `conditions`. */
export function countStatement(tenant: string, conditions: readonly SqlFragment[], shapes = readShapes): Statement {
  const rows = tenantRowsShape(tenant, ...conditions);
  return shapes.statement(`count ${rows.shape}`, rows.bindings, () => tenantRows(DOCUMENTS, tenant, ...conditions).count({ count: '*' }));
}

/**
 * How much JSON one insert statement carries at most. PostgreSQL takes up to 1 GB in a message,
 * but each batch must be written within the statement time limit, GIN index entries included:
 * 1 MB of small documents (16 384) took 1.1 s on a 2-core machine at load average 23, 4 MB 2.7 s.
 */
const INSERT_BATCH_CHARACTERS = 1024 * 1024;

/** `documents` cut into batches of about `INSERT_BATCH_CHARACTERS` of JSON each, in order. */
export function insertBatches(documents: readonly Document[]): string[] {
  const batches: string[] = [];
  let batch: string[] = [];
  let size = 0;
  for (const document of documents) {
    const json = JSON.stringify(document);
    if (batch.length > 0 && size + json.length > INSERT_BATCH_CHARACTERS) {
      batches.push(`[${batch.join(',')}]`);
      batch = [];
      size = 0;
    }
    batch.push(json);
    size += json.length + 1;
  }
  if (batch.length > 0) batches.push(`[${batch.join(',')}]`);
  return batches;
}

/**
 * Inserts the documents of a JSON array (`insertBatches`) as rows of `tenant`: three bound
 * values whatever the number of documents (a statement takes at most 65 535).
 */
export function insertStatement(tenant: string, collection: string, documentsJson: string): Statement {
  const rows = sql.raw("select ?, ?, document->>'_id', document from jsonb_array_elements(?::jsonb) as document", [tenant, collection, documentsJson]);
  return statementOf(sql.raw('insert into ?? (tenant, collection, id, doc) ?', [DOCUMENTS, rows]));
}
