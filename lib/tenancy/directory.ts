import type { Knex } from 'knex';

/** How long "no such tenant" is remembered, so a tenant created by `make tenant` shows up soon. */
const UNKNOWN_TTL_MS = 2000;
const UNKNOWN_MAX = 10_000;

/**
 * The tenants table, read through a cache: a known tenant costs no query, and an unknown
 * name costs at most one query per name every two seconds.
 */
export class TenantDirectory {
  readonly #knex: Knex;
  readonly #known = new Set<string>();
  readonly #unknownUntil = new Map<string, number>();

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  /** True for a tenant already seen: the common case, answered without a promise. */
  isKnown(name: string): boolean {
    return this.#known.has(name);
  }

  async exists(name: string): Promise<boolean> {
    if (this.#known.has(name)) return true;
    const until = this.#unknownUntil.get(name);
    if (until !== undefined && until > Date.now()) return false;
    const row = await this.#knex('tenants').where({ name }).first('name');
    if (row) {
      this.#known.add(name);
      this.#unknownUntil.delete(name);
      return true;
    }
    if (this.#unknownUntil.size >= UNKNOWN_MAX) this.#unknownUntil.clear();
    this.#unknownUntil.set(name, Date.now() + UNKNOWN_TTL_MS);
    return false;
  }
}

/** Creates a tenant unless it exists; returns true when it was new. */
export async function createTenant(knex: Knex, name: string): Promise<boolean> {
  const inserted = await knex('tenants').insert({ name }).onConflict('name').ignore().returning('name');
  return inserted.length > 0;
}
