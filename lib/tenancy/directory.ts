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
 * Tenants are never deleted, so a name once found stays valid. Misses are not remembered: a new tenant is served at once
 * everywhere, and random names would never hit such a cache anyway; a miss is one primary-key lookup.
 */
export class TenantDirectory implements TenantLookup {
  readonly #database: TenantDatabase;
  readonly #known = new Set<string>();

  constructor(database: TenantDatabase) {
    this.#database = database;
  }

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

/** As the database's owner; true when it was new. */
export async function createTenant(knex: Knex, name: string): Promise<boolean> {
  const inserted = await knex('tenants').insert({ name }).onConflict('name').ignore().returning('name');
  return inserted.length > 0;
}
