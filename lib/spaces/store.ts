import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { sql, type SqlFragment } from '../db/statement.ts';
import { tenantRows } from '../tenancy/scope.ts';
import type { NameGrant, SpaceAccess } from './access.ts';
import { insertEvent, readHistory, type HistoryPage, type PageRequest } from './history.ts';
import { COLUMNS, inTransaction, LIVE, namedSpace, rowsIn, rowsOf, spaceOfRow, storedOfRow, TABLE, tenantScope, type ChangeScope, type Space, type SpaceRow, type StoredSpace } from './rows.ts';
import { purgeTrashedCopy } from './trash.ts';
import type { SpaceDraft } from './validation.ts';

export type { Space, StoredSpace } from './rows.ts';

/** Every space `access` may see, sorted by name in byte order, schemas filtered to the readable ones. */
export async function listVisibleSpaces(access: SpaceAccess): Promise<Space[]> {
  const scope = tenantScope();
  const rows = await rowsOf(scope, visibleSpaces(scope.tenant, access).orderByRaw('name collate "C"'));
  return rows.map(spaceOfRow);
}

/** The space `name` as `access` sees it, or undefined when it is absent, in the trash or hidden. */
export async function findVisibleSpace(name: string, access: SpaceAccess): Promise<StoredSpace | undefined> {
  const scope = tenantScope();
  const [row] = await rowsOf(scope, visibleSpaces(scope.tenant, access, namedSpace(name)).limit(1));
  return row && storedOfRow(row);
}

/** The versions a write may replace (`If-Match`), undefined for any; checked in the write's own statement. */
export type AllowedVersions = readonly string[] | undefined;

/** The space exists but its version is none of the allowed ones: nothing was changed. */
export class StaleVersion extends Error {
  override name = 'StaleVersion';
  constructor() {
    super('the space has changed since the version given');
  }
}

/**
 * Creates the space and its event; undefined when a live space has the name (SPEC §6.4). A
 * trashed copy is purged first, in the same transaction: a name has one row at most (SPEC §6.7).
 */
export async function insertSpace(draft: SpaceDraft): Promise<StoredSpace | undefined> {
  const scope = tenantScope();
  const inserting = sql(TABLE)
    .insert({ tenant: scope.tenant, name: draft.name, schemas: [...draft.schemas] })
    .onConflict(['tenant', 'name'])
    .ignore()
    .returning(COLUMNS);
  return inTransaction(scope, async (run) => {
    await purgeTrashedCopy(run, scope, draft.name);
    const [row] = await rowsIn(run, inserting);
    if (row === undefined) return undefined;
    await insertEvent(run, scope, row.name, 'created', undefined, row.schemas);
    return storedOfRow(row);
  });
}

/** Replaces the schema list, with its `updated` event; undefined when there is no such live space. */
export async function replaceSpaceSchemas(name: string, schemas: readonly string[], allowed?: AllowedVersions): Promise<StoredSpace | undefined> {
  const scope = tenantScope();
  // The new version is made here, not by gen_random_uuid(): Citus refuses a VOLATILE function in an UPDATE (SPEC §15.4).
  const changes = { schemas: [...schemas], updated_at: sql.fn.now(), version: randomUUID() };
  return changeSpace(scope, name, allowed, 'updated', (rows) => rows.update(changes).returning(COLUMNS));
}

/** To the trash, or gone for good when `trashDays` is 0; returns the space as it was. */
export async function deleteSpace(name: string, trashDays: number, allowed?: AllowedVersions): Promise<StoredSpace | undefined> {
  const scope = tenantScope();
  const write = trashDays === 0 ? (rows: Knex.QueryBuilder) => rows.delete() : (rows: Knex.QueryBuilder) => rows.update({ deleted_at: sql.fn.now() });
  return changeSpace(scope, name, allowed, 'deleted', (rows) => write(rows).returning(COLUMNS));
}

/**
 * Locks the row (the event's `before`), writes it where its version is allowed, adds the event;
 * any failure, the event's included, rolls the whole change back (SPEC §6.6).
 */
async function changeSpace(
  scope: ChangeScope,
  name: string,
  allowed: AllowedVersions,
  action: 'updated' | 'deleted',
  write: (rows: Knex.QueryBuilder) => Knex.QueryBuilder,
): Promise<StoredSpace | undefined> {
  return inTransaction(scope, async (run) => {
    const [before] = await rowsIn<Pick<SpaceRow, 'schemas'>>(run, tenantRows(TABLE, scope.tenant, namedSpace(name), LIVE).select('schemas').forUpdate());
    if (before === undefined) return undefined;
    const conditions = allowed === undefined ? [namedSpace(name), LIVE] : [namedSpace(name), LIVE, { sql: 'version = any(?::uuid[])', bindings: [[...allowed]] }];
    const [row] = await rowsIn(run, write(tenantRows(TABLE, scope.tenant, ...conditions)));
    if (row === undefined) throw new StaleVersion();
    await insertEvent(run, scope, name, action, before.schemas, action === 'deleted' ? undefined : row.schemas);
    return storedOfRow(row);
  });
}

/**
 * SPEC §6.2 in SQL: a space with no schemas passes the schema condition, others need one readable
 * schema. Trashed spaces are never visible, so a list naming only them grants nothing (§6.7).
 */
function visibleSpaces(tenant: string, access: SpaceAccess, ...conditions: SqlFragment[]): Knex.QueryBuilder {
  const visibility = [...conditions, LIVE];
  if (!access.spaces.all) visibility.push({ sql: 'name = any(?::text[])', bindings: [[...access.spaces.names]] as never });
  if (!access.schemas.all) visibility.push({ sql: 'cardinality(schemas) = 0 or schemas && ?::text[]', bindings: [[...access.schemas.names]] as never });
  return tenantRows(TABLE, tenant, ...visibility).select('name', 'created_at', 'updated_at', 'version', shownSchemas(access.schemas));
}

/** The readable schemas of each space, in their stored order. */
function shownSchemas(readable: NameGrant): Knex.Raw | string {
  if (readable.all) return 'schemas';
  return sql.raw(
    'array(select listed.schema from unnest(schemas) with ordinality as listed(schema, position) where listed.schema = any(?::text[]) order by listed.position) as schemas',
    [[...readable.names]],
  );
}

/** The events of the space `name`, newest first (SPEC §6.6); undefined when the name never existed. */
export function spaceHistory(name: string, page: PageRequest): Promise<HistoryPage | undefined> {
  return readHistory(tenantScope(), name, page);
}
