import type { Knex } from 'knex';
import { currentTenantContext } from './context.ts';

/** The database and tenant one data access runs against. */
export interface TenantScope {
  readonly knex: Knex;
  readonly tenant: string;
}

/**
 * The scope of the request being served (SPEC §4.2): its tenant and its service's database.
 * `user` names the caller in the error thrown outside a request, `hint` what to use there.
 */
export function requestScope(user: string, hint = ''): TenantScope {
  const context = currentTenantContext();
  if (context === undefined) throw new Error(`${user} is used outside a request: no tenant context${hint}`);
  return { knex: context.runtime.knex, tenant: context.tenant };
}

/**
 * The one place the tenant condition is written (SPEC §4.2): every read, update and delete of
 * tenant data starts from these rows; inserts take their tenant from the same scope.
 */
export function tenantRows(executor: Knex | Knex.Transaction, table: string, tenant: string): Knex.QueryBuilder {
  return executor(table).where('tenant', tenant);
}
