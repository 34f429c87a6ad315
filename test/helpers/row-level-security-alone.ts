import type { Statement } from '../../lib/db/statement.ts';
import { TenantDatabase, type TransactionStatement } from '../../lib/db/tenant-database.ts';

/** The application's tenant condition as knex writes it (`tenantRows`, lib/tenancy/scope.ts). */
const APPLICATION_CONDITION = /"tenant" = \$(\d+)/g;

/**
 * `statement` without the application's tenant condition: each `"tenant" = $n` becomes a
 * condition every row meets, its value still bound, so the statement reads or changes every
 * tenant's rows that the rest of it names, and row-level security alone keeps tenants apart.
 */
export function withoutApplicationTenantCondition(statement: Statement): Statement {
  return { sql: statement.sql.replace(APPLICATION_CONDITION, '$$$1::text is not null'), bindings: statement.bindings };
}

/**
 * Leaves the application's tenant condition out of every statement this process's tenant
 * databases send, until the returned function is called, so that a test can show row-level
 * security keeping tenants apart on its own. The service's code knows nothing of it: the
 * statements are rewritten on their way to `TenantDatabase`.
 */
export function dropApplicationTenantConditionForTest(): () => void {
  const { query, transaction } = TenantDatabase.prototype;
  TenantDatabase.prototype.query = function (this: TenantDatabase, tenant, statement) {
    return query.call(this, tenant, withoutApplicationTenantCondition(statement));
  } as typeof query;
  TenantDatabase.prototype.transaction = function (this: TenantDatabase, tenant, work, stillWanted) {
    const rewritten = (run: TransactionStatement) => work((statement) => run(withoutApplicationTenantCondition(statement)));
    return transaction.call(this, tenant, rewritten, stillWanted);
  } as typeof transaction;
  return () => {
    TenantDatabase.prototype.query = query;
    TenantDatabase.prototype.transaction = transaction;
  };
}
