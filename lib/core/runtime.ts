import type { KeyObject } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config, Secrets } from '../config/index.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import type { ServiceMetrics } from '../metrics/index.ts';
import type { Logger } from '../logger/index.ts';

/** Whether the service has begun to stop (SIGTERM): `/readyz` answers 503 from then on. */
export class Readiness {
  #draining = false;

  get draining(): boolean {
    return this.#draining;
  }

  beginDraining(): void {
    this.#draining = true;
  }
}

/**
 * The shared objects of one running service, made once by `createRuntime`. Each folder adds the
 * part it owns by augmenting this interface beside its contract (`lib/tenancy/directory.ts`,
 * `lib/ratelimit/budget.ts`, `lib/facilities/settings.ts`...), as it does `RequestState`.
 */
export interface Runtime {
  readonly config: Config;
  readonly secrets: Secrets;
  /** The database as the migrating owner sees it: migrations, tools and tests, never tenant data. */
  readonly knex: Knex;
  /** Where session work goes (migrations, index builds): `DATABASE_DIRECT_URL`, else the database's own URL. */
  readonly sessionUrl: string;
  /** Where every statement on tenant data runs: the restricted role, under row-level security. */
  readonly tenantDatabase: TenantDatabase;
  readonly logger: Logger;
  /** What `GET /metrics` shows, recorded only when `METRICS_TOKEN` is set (undefined otherwise). */
  readonly metrics: ServiceMetrics | undefined;
  readonly readiness: Readiness;
  /** The JWT secret as a prebuilt key, so verifying a token does not rebuild it each time. */
  readonly jwtKey: KeyObject;
  /** Closed in reverse order on shutdown, after the HTTP server has drained; complete at start-up. */
  readonly shutdownTasks: ReadonlyArray<() => Promise<void>>;
}
