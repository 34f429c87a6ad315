import type { KeyObject } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config, Secrets } from '../config/index.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import type { Logger } from './logger.ts';

/** The tenants table as the tenant step reads it (SPEC §4.1), cached. */
export interface TenantLookup {
  /** True for a tenant already seen: the common case, answered without a promise. */
  isKnown(name: string): boolean;
  exists(name: string): Promise<boolean>;
}

/** The shared objects of one running service, created once at start-up. */
export interface Runtime {
  readonly config: Config;
  readonly secrets: Secrets;
  /** The database as the migrating owner sees it: migrations, tools and tests, never tenant data. */
  readonly knex: Knex;
  /** Where every statement on tenant data runs: the restricted role, under row-level security. */
  readonly tenantDatabase: TenantDatabase;
  readonly logger: Logger;
  readonly tenants: TenantLookup;
  /** The JWT secret as a prebuilt key, so verifying a token does not rebuild it each time. */
  readonly jwtKey: KeyObject;
  /** Closed in reverse order on shutdown, after the HTTP server has drained. */
  readonly shutdownTasks: Array<() => Promise<void>>;
}
