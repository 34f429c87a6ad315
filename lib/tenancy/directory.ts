import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';
import { NO_TENANT, type TenantDatabase } from '../db/tenant-database.ts';
import { entryOf } from '../values/map-entry.ts';

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

interface Asker {
  readonly resolve: (exists: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Tenants are never deleted, so a name once found stays valid. Misses are not remembered: a new tenant is served at once
 * everywhere, and random names would never hit such a cache anyway. Names not yet known are looked up together, one
 * statement at a time (those asked meanwhile wait for the next): anyone may name a tenant, and a flood of made-up names
 * looked up one by one filled the service's share of the pool, which a real tenant's first request then waited behind.
 */
export class TenantDirectory implements TenantLookup {
  readonly #database: TenantDatabase;
  readonly #known = new Set<string>();
  #waiting = new Map<string, Asker[]>();
  /**
   * The context of the request that asked first for the names waiting: their statement is its (its trace), not that of
   * the request that started the loop, which may have ended long before.
   */
  #waitingAs: ReturnType<typeof AsyncLocalStorage.snapshot> = AsyncLocalStorage.snapshot();
  #asking: Promise<void> | undefined;

  constructor(database: TenantDatabase) {
    this.#database = database;
  }

  isKnown(name: string): boolean {
    return this.#known.has(name);
  }

  exists(name: string): Promise<boolean> {
    if (this.#known.has(name)) return Promise.resolve(true);
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) this.#waitingAs = AsyncLocalStorage.snapshot();
      entryOf(this.#waiting, name, () => []).push({ resolve, reject });
      this.#asking ??= this.#askWaiting();
    });
  }

  async #askWaiting(): Promise<void> {
    while (this.#waiting.size > 0) {
      const asked = this.#waiting;
      const askedAs = this.#waitingAs;
      this.#waiting = new Map();
      try {
        const { rows } = await askedAs(() => this.#database.query<{ name: string }>(NO_TENANT, { sql: 'select name from tenants where name = any($1)', bindings: [[...asked.keys()]] }));
        for (const { name } of rows) this.#known.add(name);
        for (const [name, askers] of asked) for (const { resolve } of askers) resolve(this.#known.has(name));
      } catch (error) {
        for (const askers of asked.values()) for (const { reject } of askers) reject(error);
      }
    }
    this.#asking = undefined;
  }
}

/** As the database's owner; true when it was new. */
export async function createTenant(knex: Knex, name: string): Promise<boolean> {
  const inserted = await knex('tenants').insert({ name }).onConflict('name').ignore().returning('name');
  return inserted.length > 0;
}
