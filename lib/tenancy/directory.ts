import type { Knex } from 'knex';
import { NO_TENANT, type TenantDatabase } from '../db/tenant-database.ts';

/** The tenants table as the tenant step reads it (SPEC §4.1), cached. */
export interface TenantLookup {
  /** True for a tenant already seen: the common case, answered without a promise. */
  isKnown(name: string): boolean;
  exists(name: string): Promise<boolean>;
}

declare module '../core/runtime.ts' {
  interface Runtime {
    readonly tenants: TenantLookup;
  }
}

/**
 * The tenants table, read through a cache of the names that exist: a known tenant costs no
 * query. Tenants are never deleted, so a name once found stays valid.
 *
 * An unknown name is not remembered: a tenant created by another instance or by `make tenant`
 * is served at once, everywhere. Remembering misses would not shield the database anyway, since
 * a caller sending random names never hits such a cache; each miss is one primary-key lookup,
 * bounded like every other query by the pool and the query time limit.
 */
export class TenantDirectory implements TenantLookup {
  readonly #database: TenantDatabase;
  readonly #known = new Set<string>();

  constructor(database: TenantDatabase) {
    this.#database = database;
  }

  /** True for a tenant already seen: the common case, answered without a promise. */
  isKnown(name: string): boolean {
    return this.#known.has(name);
  }

  async exists(name: string): Promise<boolean> {
    if (this.#known.has(name)) return true;
    const { rowCount } = await this.#database.query(NO_TENANT, { sql: 'select 1 from tenants where name = $1', bindings: [name] });
    if (rowCount === 0) return false;
    this.#known.add(name);
    return true;
  }
}

/** Creates a tenant unless it exists (as the database's owner); returns true when it was new. */
export async function createTenant(knex: Knex, name: string): Promise<boolean> {
  const inserted = await knex('tenants').insert({ name }).onConflict('name').ignore().returning('name');
  return inserted.length > 0;
}
