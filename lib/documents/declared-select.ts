import { sql, type StatementShapes, type Statement } from '../db/statement.ts';
import { tenantRows, tenantRowsShape } from '../tenancy/scope.ts';
import { DOCUMENTS, type ReadPage } from './statements.ts';
import type { SqlFragment } from './types.ts';

/**
 * Each branch (`DeclaredPaths.branches`) is read in order with its own limit, so PostgreSQL reads the index in order and
 * stops early; one OR of them would test every entry or sort every match: seconds over a million documents.
 */
export function branchedSelectStatement(tenant: string, inCollection: SqlFragment, branches: readonly SqlFragment[], { order, skip: given, limit }: ReadPage, shapes: StatementShapes): Statement {
  const skip = given === 0 ? undefined : given;
  const end = limit === undefined ? undefined : limit + (skip ?? 0);
  const rows = branches.map((branch) => tenantRowsShape(tenant, inCollection, branch));
  const shape = `${rows.map((leg) => leg.shape).join(' union ')} order ${order.sql}${end === undefined ? '' : ' limit'}${skip === undefined ? '' : ' offset'}`;
  const bindings = [
    ...rows.flatMap((leg) => [...leg.bindings, ...order.bindings, ...(end === undefined ? [] : [end])]),
    ...order.bindings,
    ...(limit === undefined ? [] : [limit]),
    ...(skip === undefined ? [] : [skip]),
  ];
  return shapes.statement(shape, bindings, () => {
    const legs = branches.map((branch) => {
      const leg = tenantRows(DOCUMENTS, tenant, inCollection, branch).select('doc', 'id').orderByRaw(order.sql, order.bindings);
      return end === undefined ? leg : leg.limit(end);
    });
    const query = sql
      .select('doc')
      .from(sql.raw(`(${legs.map(() => '?').join(' union all ')}) as documents`, legs))
      .orderByRaw(order.sql, order.bindings);
    if (skip !== undefined) query.offset(skip);
    if (limit !== undefined) query.limit(limit);
    return query;
  });
}
