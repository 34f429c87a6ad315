import type { Knex } from 'knex';
import { sql, statementOf } from '../db/statement.ts';
import { requestScope, tenantRows, type TenantScope } from '../tenancy/scope.ts';
import type { NameGrant, SpaceAccess } from './access.ts';
import type { SpaceDraft } from './validation.ts';

/** A space as the API shows it (SPEC §6.1). */
export interface Space {
  readonly name: string;
  readonly schemas: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

interface SpaceRow {
  name: string;
  schemas: string[];
  created_at: Date;
  updated_at: Date;
}

const TABLE = 'spaces';
const COLUMNS = ['name', 'schemas', 'created_at', 'updated_at'];

function tenantScope(): TenantScope {
  return requestScope('the spaces store');
}

async function rowsOf(scope: TenantScope, builder: Knex.QueryBuilder): Promise<SpaceRow[]> {
  return (await scope.database.query<SpaceRow>(scope.tenant, statementOf(builder))).rows;
}

/** Every space `access` may see, sorted by name in byte order, schemas filtered to the readable ones. */
export async function listVisibleSpaces(access: SpaceAccess): Promise<Space[]> {
  const scope = tenantScope();
  const rows = await rowsOf(scope, visibleSpaces(scope.tenant, access).orderByRaw('name collate "C"'));
  return rows.map(spaceOfRow);
}

/** The space `name` as `access` sees it, or undefined when it is absent or hidden. */
export async function findVisibleSpace(name: string, access: SpaceAccess): Promise<Space | undefined> {
  const scope = tenantScope();
  const [row] = await rowsOf(scope, visibleSpaces(scope.tenant, access, namedSpace(name)).limit(1));
  return row && spaceOfRow(row);
}

/** Creates the space; undefined when the name is taken (the primary key decides, SPEC §6.4). */
export async function insertSpace(draft: SpaceDraft): Promise<Space | undefined> {
  const scope = tenantScope();
  const inserting = sql(TABLE)
    .insert({ tenant: scope.tenant, name: draft.name, schemas: [...draft.schemas] })
    .onConflict(['tenant', 'name'])
    .ignore()
    .returning(COLUMNS);
  const [row] = await rowsOf(scope, inserting);
  return row && spaceOfRow(row);
}

/** Replaces the schema list; undefined when there is no such space. */
export async function replaceSpaceSchemas(name: string, schemas: readonly string[]): Promise<Space | undefined> {
  const scope = tenantScope();
  const updating = tenantRows(TABLE, scope.tenant, namedSpace(name))
    .update({ schemas: [...schemas], updated_at: sql.fn.now() })
    .returning(COLUMNS);
  const [row] = await rowsOf(scope, updating);
  return row && spaceOfRow(row);
}

/** Deletes the space and returns it as it was; undefined when there is no such space. */
export async function deleteSpace(name: string): Promise<Space | undefined> {
  const scope = tenantScope();
  const [row] = await rowsOf(scope, tenantRows(TABLE, scope.tenant, namedSpace(name)).delete().returning(COLUMNS));
  return row && spaceOfRow(row);
}

function namedSpace(name: string): { sql: string; bindings: string[] } {
  return { sql: 'name = ?', bindings: [name] };
}

/**
 * SPEC §6.2 in SQL: the space list and the schema permissions both apply. A space with no
 * schemas passes the schema condition; otherwise it needs one readable schema.
 */
function visibleSpaces(tenant: string, access: SpaceAccess, ...conditions: Array<{ sql: string; bindings: string[] }>): Knex.QueryBuilder {
  const visibility = [...conditions];
  if (!access.spaces.all) visibility.push({ sql: 'name = any(?::text[])', bindings: [[...access.spaces.names]] as never });
  if (!access.schemas.all) visibility.push({ sql: 'cardinality(schemas) = 0 or schemas && ?::text[]', bindings: [[...access.schemas.names]] as never });
  return tenantRows(TABLE, tenant, ...visibility).select('name', 'created_at', 'updated_at', shownSchemas(access.schemas));
}

/** The readable schemas of each space, in their stored order. */
function shownSchemas(readable: NameGrant): Knex.Raw | string {
  if (readable.all) return 'schemas';
  return sql.raw(
    'array(select listed.schema from unnest(schemas) with ordinality as listed(schema, position) where listed.schema = any(?::text[]) order by listed.position) as schemas',
    [[...readable.names]],
  );
}

function spaceOfRow(row: SpaceRow): Space {
  return {
    name: row.name,
    schemas: row.schemas,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
