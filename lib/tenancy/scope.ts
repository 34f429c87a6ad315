import type { Knex } from 'knex';
import { sql, type SqlFragment } from '../db/statement.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import { currentTenantContext } from './context.ts';

/** The database and tenant one data access runs against. */
export interface TenantScope {
  readonly database: TenantDatabase;
  readonly tenant: string;
}

/**
 * The scope of the request being served (SPEC §4.2): its tenant and its service's database.
 * `user` names the caller in the error thrown outside a request, `hint` what to use there.
 */
export function requestScope(user: string, hint = ''): TenantScope {
  const context = currentTenantContext();
  if (context === undefined) throw new Error(`${user} is used outside a request: no tenant context${hint}`);
  return { database: context.runtime.tenantDatabase, tenant: context.tenant };
}

/**
 * The one place the application writes the tenant condition (SPEC §4.2): every read, update and
 * delete of tenant data starts from these rows; inserts take their tenant from the same scope.
 * Each further condition is grouped as one (parenthesised) term ANDed to the tenant's, so no
 * condition, whatever operators it holds, can widen the rows beyond the tenant's.
 * Row-level security (`TenantDatabase`) applies the same condition a second time.
 */
export function tenantRows(table: string, tenant: string, ...conditions: SqlFragment[]): Knex.QueryBuilder {
  const rows = sql(table);
  if (applicationConditionOn) rows.where('tenant', tenant);
  for (const condition of conditions) rows.where((group) => group.whereRaw(condition.sql, condition.bindings));
  return rows;
}

let applicationConditionOn = true;

/**
 * For tests only, never configuration: leaves the application's tenant condition out of every
 * statement until the returned function is called, so that a test can show row-level security
 * keeping tenants apart on its own.
 */
export function dropApplicationTenantConditionForTest(): () => void {
  applicationConditionOn = false;
  return () => {
    applicationConditionOn = true;
  };
}
