import { StatementShapes, type SqlFragment, type Statement } from '../db/statement.ts';
import { tenantRows, tenantRowsShape } from '../tenancy/scope.ts';

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
