import type { ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import pg from 'pg';
import { createKnex } from '../../lib/db/connect.ts';
import { TenantDatabase, type TenantDatabaseOptions } from '../../lib/db/tenant-database.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { createDatabaseOn, createMigratedDatabaseOn, type FreshDatabase, TEST_QUEUE_MS } from '../../lib/testing/database.ts';

/**
 * The wait for a new connection of the tests' own pools: a loaded machine (the suite beside
 * other work) can take longer than the service's 1.5 s default to start a backend. Tests of
 * that limit set their own.
 */
export const TEST_CONNECT_TIMEOUT_MS = 10_000;

/** A knex over `url` for a test's own setup and checks (the owner's view). */
export function testKnex(url: string): Knex {
  return createKnex(url, { connectTimeoutMs: TEST_CONNECT_TIMEOUT_MS });
}

/** The service's view of the database at `url` (row-level security), for a test. */
export function testTenantDatabase(url: string, options: TenantDatabaseOptions = {}): TenantDatabase {
  return new TenantDatabase(url, { connectTimeoutMs: TEST_CONNECT_TIMEOUT_MS, queueMs: TEST_QUEUE_MS, ...options });
}

/** The server the suite runs against: `make test` always sets DATABASE_URL (embedded or not). */
export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the tests through `make test`');
  return url;
}

/** Whether the test server holds a database of that name (a run's scratch database, to see it dropped). */
export async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

/** Creates an empty database on the test server and returns its URL and a function that drops it. */
export function createFreshDatabase(): Promise<FreshDatabase> {
  return createDatabaseOn(serverUrl());
}

/** Creates a database on the test server already migrated to the latest migration (a copy of a template). */
export function createMigratedDatabase(): Promise<FreshDatabase> {
  return createMigratedDatabaseOn(serverUrl());
}

/** A knex over a fresh, empty database; both are gone when the test ends. */
export async function freshKnex(t: ExecutionContext): Promise<Knex> {
  const database = await createFreshDatabase();
  const knex = testKnex(database.url);
  t.teardown(async () => {
    await knex.destroy();
    await database.drop();
  });
  return knex;
}

export interface MigratedDatabase {
  url: string;
  /** The owner's view: for setting up and inspecting rows, across tenants. */
  knex: Knex;
  /** The service's view: the restricted role under row-level security. */
  tenantDatabase: TenantDatabase;
  /** Closes the pool and drops the database. */
  close(): Promise<void>;
}

/**
 * How the service's view reaches a database: the URL it uses for the database's own (a
 * pooler's), and its pool size; or where the whole database is made instead of the test server
 * (`create`: a Citus cluster's, distributed).
 */
export interface TenantDatabaseRoute {
  url?(databaseUrl: string): string;
  poolMax?: number;
  /** Told if the connections turn out to keep no prepared statement (`TenantDatabaseOptions.onUnprepared`). */
  onUnprepared?(): void;
  create?(tenants: string[]): Promise<MigratedDatabase>;
}

/**
 * A fresh, migrated database for one test file, with the named tenants created; its
 * `tenantDatabase` goes through `route` when given (migrations and `knex` always go direct).
 */
export async function migratedDatabase(tenants: string[], route?: TenantDatabaseRoute): Promise<MigratedDatabase> {
  if (route?.create !== undefined) return route.create(tenants);
  const database = await createMigratedDatabase();
  const knex = testKnex(database.url);
  for (const tenant of tenants) await createTenant(knex, tenant);
  const tenantDatabase = testTenantDatabase(route?.url?.(database.url) ?? database.url, { poolMax: route?.poolMax, onUnprepared: route?.onUnprepared });
  return {
    url: database.url,
    knex,
    tenantDatabase,
    close: async () => {
      await tenantDatabase.close();
      await knex.destroy();
      await database.drop();
    },
  };
}

/** Runs `work` with the service's view of the database at `url` (row-level security), closed afterwards. */
export async function withTenantDatabase<Result>(url: string, work: (database: TenantDatabase) => Promise<Result>): Promise<Result> {
  const database = testTenantDatabase(url);
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}
