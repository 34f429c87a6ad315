import type { Knex } from 'knex';
import { sql, type SqlFragment } from '../db/statement.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import { currentRequest, newRequestState, runInRequest } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';

export interface TenantScope {
  readonly database: TenantDatabase;
  readonly tenant: string;
  /** False once the request ended or was answered with an error: its open transactions then roll back (`RequestState.ended`, `givenUp`). */
  readonly stillWanted: () => boolean;
  readonly declaredPaths?: Runtime['declaredPaths'];
  readonly documentShapes?: Runtime['documentShapes'];
}

/** SPEC §4.2; `user` names the caller in the error thrown outside a request, `hint` what to use there. */
export function requestScope(user: string, hint = ''): TenantScope & Required<Pick<TenantScope, 'declaredPaths' | 'documentShapes'>> {
  const request = currentRequest();
  if (request?.tenant === undefined || request.runtime === undefined) throw new Error(`${user} is used outside a request: no tenant context${hint}`);
  if (request.ended) throw new RequestEnded(user);
  const { tenantDatabase, declaredPaths, documentShapes } = request.runtime;
  return { database: tenantDatabase, tenant: request.tenant, stillWanted: () => !request.givenUp && !request.ended, declaredPaths, documentShapes };
}

/** Work a handler leaves running after its answer went, or its client left, has no request to act for (SPEC §17.1). */
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
 * The one place the application writes the tenant condition (SPEC §4.2). Each further condition is one parenthesised
 * term ANDed to it, so none can widen the rows; row-level security applies the same condition a second time.
 */
export function tenantRows(table: string, tenant: string, ...conditions: SqlFragment[]): Knex.QueryBuilder {
  const rows = sql(table).where('tenant', tenant);
  for (const condition of conditions) rows.where((group) => group.whereRaw(condition.sql, condition.bindings));
  return rows;
}

/** What `tenantRows` writes, as a `StatementShapes` shape and its values in the order the text binds them. */
export function tenantRowsShape(tenant: string, ...conditions: SqlFragment[]): { shape: string; bindings: unknown[] } {
  // Loops: map, join and flatMap took twice as long, on every document read.
  let texts = '';
  const bindings: unknown[] = [tenant];
  for (let index = 0; index < conditions.length; index += 1) {
    const { sql: text, bindings: values } = conditions[index] as SqlFragment;
    texts = index === 0 ? text : `${texts}) and (${text}`;
    for (const value of values) bindings.push(value);
  }
  return { shape: `tenant and (${texts})`, bindings };
}
