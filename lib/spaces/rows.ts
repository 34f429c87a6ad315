import type { Knex } from 'knex';
import { statementOf, type SqlFragment } from '../db/statement.ts';
import type { TransactionStatement } from '../db/tenant-database.ts';
import { currentRequest, type RequestState } from '../core/request-state.ts';
import { requestScope, type TenantScope } from '../tenancy/scope.ts';

/** A space as the API shows it (SPEC §6.1). */
export interface Space {
  readonly name: string;
  readonly schemas: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A space with its version, the strong validator its ETag carries (SPEC §6.5). */
export interface StoredSpace {
  readonly space: Space;
  readonly version: string;
}

export interface SpaceRow {
  name: string;
  schemas: string[];
  created_at: Date;
  updated_at: Date;
  version: string;
}

export const TABLE = 'spaces';
export const COLUMNS = ['name', 'schemas', 'created_at', 'updated_at', 'version'];

/** Spaces not in the trash: the only ones the calls of SPEC §6's table see (SPEC §6.7). */
export const LIVE: SqlFragment = { sql: 'deleted_at is null', bindings: [] };
export const TRASHED: SqlFragment = { sql: 'deleted_at is not null', bindings: [] };

/** Trashed spaces still within their days: older ones are as good as purged, even before the sweep. */
export function trashedWithin(days: number): SqlFragment {
  return { sql: 'deleted_at > now() - make_interval(days => ?)', bindings: [days] };
}

export function namedSpace(name: string): SqlFragment {
  return { sql: 'name = ?', bindings: [name] };
}

/** A change's scope: its tenant's, and the request it is made in (none: the purge by the timer), which its event names. */
export type ChangeScope = TenantScope & { readonly request?: RequestState | undefined };

export function tenantScope(): ChangeScope {
  return { ...requestScope('the spaces store'), request: currentRequest() };
}

export async function rowsOf<Row = SpaceRow>(scope: TenantScope, builder: Knex.QueryBuilder): Promise<Row[]> {
  return (await scope.database.query(scope.tenant, statementOf(builder))).rows as Row[];
}

export async function rowsIn<Row = SpaceRow>(run: TransactionStatement, builder: Knex.QueryBuilder): Promise<Row[]> {
  return (await run(statementOf(builder))).rows as Row[];
}

export function inTransaction<Result>(scope: TenantScope, work: (run: TransactionStatement) => Promise<Result>): Promise<Result> {
  return scope.database.transaction(scope.tenant, work, scope.stillWanted);
}

export function storedOfRow(row: SpaceRow): StoredSpace {
  return { space: spaceOfRow(row), version: row.version };
}

export function spaceOfRow(row: SpaceRow): Space {
  return {
    name: row.name,
    schemas: row.schemas,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
