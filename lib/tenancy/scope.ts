import type { Knex } from 'knex';
import { sql, type SqlFragment } from '../db/statement.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import { currentRequest, newRequestState, runInRequest } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';

/** The database and tenant one data access runs against. */
export interface TenantScope {
  readonly database: TenantDatabase;
  readonly tenant: string;
  /** False once the request ended or was answered with an error: its open transactions then roll back (`RequestState.ended`, `givenUp`). */
  readonly stillWanted: () => boolean;
  /** The paths projects declared an index on, for the document store; none: every path compiles alike. */
  readonly declaredPaths?: Runtime['declaredPaths'];
  /** The statements the document store reuses by shape, the service's own; none: the store keeps its own. */
  readonly documentShapes?: Runtime['documentShapes'];
}

/**
 * The scope of the request being served (SPEC §4.2): its tenant and its service's database.
 * `user` names the caller in the error thrown outside a request, `hint` what to use there.
 */
export function requestScope(user: string, hint = ''): TenantScope & Required<Pick<TenantScope, 'declaredPaths' | 'documentShapes'>> {
  const request = currentRequest();
  if (request?.tenant === undefined || request.runtime === undefined) throw new Error(`${user} is used outside a request: no tenant context${hint}`);
  if (request.ended) throw new RequestEnded(user);
  const { tenantDatabase, declaredPaths, documentShapes } = request.runtime;
  return { database: tenantDatabase, tenant: request.tenant, stillWanted: () => !request.givenUp && !request.ended, declaredPaths, documentShapes };
}

/**
 * Data access for a request that is over (SPEC §17.1): its answer went, or its client left.
 * Work a handler leaves running after that has no request to act for.
 */
export class RequestEnded extends Error {
  override name = 'RequestEnded';
  constructor(user: string) {
    super(`${user} is used after its request ended (answered, or its client gone): finish every ${user} call before answering`);
  }
}

/** Runs `work` as a request of `tenant` would run it: for tools and tests that act for a tenant. */
export function runInTenant<Result>(runtime: Runtime, tenant: string, work: () => Result): Result {
  return runInRequest(newRequestState('', runtime, tenant), work);
}

/**
 * The one place the application writes the tenant condition (SPEC §4.2): every read, update and
 * delete of tenant data starts from these rows; inserts take their tenant from the same scope.
 * Each further condition is grouped as one (parenthesised) term ANDed to the tenant's, so no
 * condition, whatever operators it holds, can widen the rows beyond the tenant's.
 * Row-level security (`TenantDatabase`) applies the same condition a second time.
 */
export function tenantRows(table: string, tenant: string, ...conditions: SqlFragment[]): Knex.QueryBuilder {
  const rows = sql(table).where('tenant', tenant);
  for (const condition of conditions) rows.where((group) => group.whereRaw(condition.sql, condition.bindings));
  return rows;
}

/**
 * What `tenantRows` writes for these conditions, as a shape (what decides its SQL text) and
 * its values in the order the text binds them: for `StatementShapes`.
 */
export function tenantRowsShape(tenant: string, ...conditions: SqlFragment[]): { shape: string; bindings: unknown[] } {
  const texts = conditions.map((condition) => condition.sql).join(') and (');
  const values = conditions.flatMap((condition) => condition.bindings);
  return { shape: `tenant and (${texts})`, bindings: [tenant, ...values] };
}
