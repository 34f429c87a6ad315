import type { Knex } from 'knex';
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

const COLUMNS = ['name', 'schemas', 'created_at', 'updated_at'];

function tenantScope(): TenantScope {
  return requestScope('the spaces store');
}

function tenantSpaces(scope: TenantScope): Knex.QueryBuilder {
  return tenantRows(scope.knex, 'spaces', scope.tenant);
}

/** Every space `access` may see, sorted by name in byte order, schemas filtered to the readable ones. */
export async function listVisibleSpaces(access: SpaceAccess): Promise<Space[]> {
  const rows: SpaceRow[] = await visibleSpaces(tenantScope(), access).orderByRaw('name collate "C"');
  return rows.map(spaceOfRow);
}

/** The space `name` as `access` sees it, or undefined when it is absent or hidden. */
export async function findVisibleSpace(name: string, access: SpaceAccess): Promise<Space | undefined> {
  const row: SpaceRow | undefined = await visibleSpaces(tenantScope(), access).where('name', name).first();
  return row && spaceOfRow(row);
}

/** Creates the space; undefined when the name is taken (the primary key decides, SPEC §6.4). */
export async function insertSpace(draft: SpaceDraft): Promise<Space | undefined> {
  const scope = tenantScope();
  const rows: SpaceRow[] = await scope
    .knex('spaces')
    .insert({ tenant: scope.tenant, name: draft.name, schemas: [...draft.schemas] })
    .onConflict(['tenant', 'name'])
    .ignore()
    .returning(COLUMNS);
  return rows[0] && spaceOfRow(rows[0]);
}

/** Replaces the schema list; undefined when there is no such space. */
export async function replaceSpaceSchemas(name: string, schemas: readonly string[]): Promise<Space | undefined> {
  const scope = tenantScope();
  const rows: SpaceRow[] = await tenantSpaces(scope)
    .where('name', name)
    .update({ schemas: [...schemas], updated_at: scope.knex.fn.now() })
    .returning(COLUMNS);
  return rows[0] && spaceOfRow(rows[0]);
}

/** Deletes the space and returns it as it was; undefined when there is no such space. */
export async function deleteSpace(name: string): Promise<Space | undefined> {
  const rows: SpaceRow[] = await tenantSpaces(tenantScope()).where('name', name).delete().returning(COLUMNS);
  return rows[0] && spaceOfRow(rows[0]);
}

/**
 * SPEC §6.2 in SQL: the space list and the schema permissions both apply. A space with no
 * schemas passes the schema condition; otherwise it needs one readable schema.
 */
function visibleSpaces(scope: TenantScope, access: SpaceAccess): Knex.QueryBuilder {
  const query = tenantSpaces(scope).select('name', 'created_at', 'updated_at', shownSchemas(scope.knex, access.schemas));
  if (!access.spaces.all) query.whereRaw('name = any(?::text[])', [[...access.spaces.names]]);
  if (!access.schemas.all) query.whereRaw('(cardinality(schemas) = 0 or schemas && ?::text[])', [[...access.schemas.names]]);
  return query;
}

/** The readable schemas of each space, in their stored order. */
function shownSchemas(knex: Knex, readable: NameGrant): Knex.Raw | string {
  if (readable.all) return 'schemas';
  return knex.raw(
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
