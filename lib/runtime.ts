import type { KeyObject } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config, Secrets } from './config/index.ts';
import type { Logger } from './http/logger.ts';
import type { TenantDirectory } from './tenancy/directory.ts';

/** The shared objects of one running service, created once at start-up. */
export interface Runtime {
  readonly config: Config;
  readonly secrets: Secrets;
  readonly knex: Knex;
  readonly logger: Logger;
  readonly tenants: TenantDirectory;
  /** The JWT secret as a prebuilt key, so verifying a token does not rebuild it each time. */
  readonly jwtKey: KeyObject;
  /** Closed in reverse order on shutdown, after the HTTP server has drained. */
  readonly shutdownTasks: Array<() => Promise<void>>;
}
