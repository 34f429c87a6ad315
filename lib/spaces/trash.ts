import type { TransactionStatement } from '../db/tenant-database.ts';
import { tenantRows, type TenantScope } from '../tenancy/scope.ts';
import { insertEvent } from './history.ts';
import { COLUMNS, inTransaction, LIVE, namedSpace, rowsIn, rowsOf, spaceOfRow, storedOfRow, TABLE, tenantScope, TRASHED, type ChangeScope, trashedWithin, type Space, type SpaceRow, type StoredSpace } from './rows.ts';

/** A space in the trash, as `GET /spaces?trashed=true` shows it (SPEC §6.7). */
export interface TrashedSpace extends Space {
  readonly deletedAt: string;
}

/** What a restore found: the space brought back, nothing in the trash, or a live space of that name. */
export type RestoreOutcome = { readonly restored: StoredSpace } | { readonly restored: undefined; readonly live: boolean };

/** How many expired spaces one purge transaction takes at most: a long trash is purged in several. */
const PURGE_BATCH = 100;

/** The trashed spaces still within `days`, sorted by name in byte order. */
export async function listTrashedSpaces(days: number): Promise<TrashedSpace[]> {
  const scope = tenantScope();
  const listing = tenantRows(TABLE, scope.tenant, TRASHED, trashedWithin(days))
    .select([...COLUMNS, 'deleted_at'])
    .orderByRaw('name collate "C"');
  const rows = await rowsOf<SpaceRow & { deleted_at: Date }>(scope, listing);
  return rows.map((row) => ({ ...spaceOfRow(row), deletedAt: row.deleted_at.toISOString() }));
}

/**
 * Brings the trashed space back as it was. The update takes the row lock: a create of the name
 * that purged the row first leaves it nothing to update, one coming second finds it live.
 */
export async function restoreSpace(name: string, days: number): Promise<RestoreOutcome> {
  const scope = tenantScope();
  return inTransaction(scope, async (run) => {
    const restoring = tenantRows(TABLE, scope.tenant, namedSpace(name), TRASHED, trashedWithin(days)).update({ deleted_at: null }).returning(COLUMNS);
    const [row] = await rowsIn(run, restoring);
    if (row !== undefined) {
      await insertEvent(run, scope, row.name, 'restored', undefined, row.schemas);
      return { restored: storedOfRow(row) };
    }
    const live = await rowsIn(run, tenantRows(TABLE, scope.tenant, namedSpace(name), LIVE).select('name').limit(1));
    return { restored: undefined, live: live.length > 0 };
  });
}

/** Purges the trashed copy of `name`, if any, with its `purged` event: a create of the name does this first (SPEC §6.7). */
export async function purgeTrashedCopy(run: TransactionStatement, scope: ChangeScope, name: string): Promise<void> {
  const purging = tenantRows(TABLE, scope.tenant, namedSpace(name), TRASHED).delete().returning(['name', 'schemas']);
  const [row] = await rowsIn<Pick<SpaceRow, 'name' | 'schemas'>>(run, purging);
  if (row !== undefined) await insertEvent(run, scope, row.name, 'purged', row.schemas, undefined);
}

/**
 * Purges the spaces trashed more than `days` ago; answers how many. Rows another instance's
 * purge locked are skipped, so each space is purged, its event written, exactly once.
 * `keepGoing` is asked between transactions, so a stop never rolls one back.
 */
export async function purgeExpiredSpaces(scope: TenantScope, days: number, keepGoing: () => boolean = () => true): Promise<number> {
  let purged = 0;
  for (;;) {
    const batch = await inTransaction(scope, (run) => purgeBatch(run, scope, days));
    purged += batch;
    if (batch < PURGE_BATCH || !keepGoing()) return purged;
  }
}

async function purgeBatch(run: TransactionStatement, scope: TenantScope, days: number): Promise<number> {
  const expired = { sql: 'deleted_at <= now() - make_interval(days => ?)', bindings: [days] };
  const oldest = tenantRows(TABLE, scope.tenant, TRASHED, expired).select('name').orderBy('deleted_at').limit(PURGE_BATCH).forUpdate().skipLocked();
  const purging = tenantRows(TABLE, scope.tenant, TRASHED).whereIn('name', oldest).delete().returning(['name', 'schemas']);
  const rows = await rowsIn<Pick<SpaceRow, 'name' | 'schemas'>>(run, purging);
  for (const row of rows) await insertEvent(run, scope, row.name, 'purged', row.schemas, undefined);
  return rows.length;
}
