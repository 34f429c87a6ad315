import { StatementShapes, type SqlFragment, type Statement } from '../db/statement.ts';
import { tenantRows, tenantRowsShape } from '../tenancy/scope.ts';
import type { Document } from './types.ts';

export const DOCUMENTS = 'documents';

/** The one path kept as a text column (migration `..._account_username_column`): under row-level security only leakproof `=` on a column uses an index. */
export const TEXT_COLUMN = { collection: 'accounts', path: 'username', column: 'account_username' } as const;

/** The statements a service's document store reuses by shape, one per runtime (`runtime.documentShapes`). */
export class DocumentShapes {
  readonly reads = new StatementShapes();
  readonly branchedReads = new StatementShapes();
}

declare module '../core/runtime.ts' {
  interface Runtime {
    readonly documentShapes: DocumentShapes;
  }
}

export interface ReadPage {
  readonly order: SqlFragment;
  readonly skip?: number;
  readonly limit?: number;
}

export function selectStatement(tenant: string, conditions: readonly SqlFragment[], { order, skip: given, limit }: ReadPage, shapes: StatementShapes): Statement {
  // Knex writes no OFFSET for 0 (and a LIMIT for 0): the shape follows what it writes.
  const skip = given === 0 ? undefined : given;
  const rows = tenantRowsShape(tenant, ...conditions);
  const shape = `select ${rows.shape} order ${order.sql}${limit === undefined ? '' : ' limit'}${skip === undefined ? '' : ' offset'}`;
  const bindings = [...rows.bindings, ...order.bindings, ...(limit === undefined ? [] : [limit]), ...(skip === undefined ? [] : [skip])];
  const statement = shapes.statement(shape, bindings, () => {
    const query = tenantRows(DOCUMENTS, tenant, ...conditions).select('doc').orderByRaw(order.sql, order.bindings);
    if (skip !== undefined) query.offset(skip);
    if (limit !== undefined) query.limit(limit);
    return query;
  });
  return conditions.some((condition) => condition.byUniqueKey === true) ? { ...statement, planOnce: true } : statement;
}

export function countStatement(tenant: string, conditions: readonly SqlFragment[], shapes: StatementShapes): Statement {
  const rows = tenantRowsShape(tenant, ...conditions);
  return shapes.statement(`count ${rows.shape}`, rows.bindings, () => tenantRows(DOCUMENTS, tenant, ...conditions).count({ count: '*' }));
}

/**
 * How much JSON one insert statement carries at most. PostgreSQL takes up to 1 GB in a message,
 * but each batch must be written within the statement time limit, GIN index entries included:
 * 1 MB of small documents (16 384) took 1.1 s on a 2-core machine at load average 23, 4 MB 2.7 s.
 */
const INSERT_BATCH_CHARACTERS = 1024 * 1024;
/** Rows of one insert: two bound values each, besides the tenant and collection, under PostgreSQL's 65 535. */
const INSERT_BATCH_ROWS = 30_000;

export type InsertRow = readonly [id: string, json: string];

export function insertBatches(documents: readonly Document[]): InsertRow[][] {
  const batches: InsertRow[][] = [];
  let batch: InsertRow[] = [];
  let size = 0;
  for (const document of documents) {
    const json = JSON.stringify(document);
    if (batch.length > 0 && (size + json.length > INSERT_BATCH_CHARACTERS || batch.length === INSERT_BATCH_ROWS)) {
      batches.push(batch);
      batch = [];
      size = 0;
    }
    batch.push([document._id, json]);
    size += json.length + 1;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** `INSERT … VALUES`, not `… SELECT` from the JSON: Citus (SPEC §15.4) sends those rows as a `COPY`, which row-level security refuses. */
export function insertStatement(tenant: string, collection: string, rows: readonly InsertRow[]): Statement {
  const values = rows.map((_, index) => `($1, $2, $${3 + 2 * index}, $${4 + 2 * index}::jsonb)`);
  return { sql: `insert into "${DOCUMENTS}" ("tenant", "collection", "id", "doc") values ${values.join(', ')}`, bindings: [tenant, collection, ...rows.flat()] };
}
