import type { Knex } from 'knex';
import { createKnex } from '../../lib/db/connect.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { createFreshDatabase } from './database.ts';

export interface MigratedDatabase {
  knex: Knex;
  /** Closes the pool and drops the database. */
  close(): Promise<void>;
}

/** A fresh, migrated database for one test file, with the named tenants created. */
export async function migratedDatabase(tenants: string[]): Promise<MigratedDatabase> {
  const database = await createFreshDatabase();
  const knex = createKnex(database.url);
  await migrateLatest(knex);
  for (const tenant of tenants) await createTenant(knex, tenant);
  return {
    knex,
    close: async () => {
      await knex.destroy();
      await database.drop();
    },
  };
}
