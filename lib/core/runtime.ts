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
 * The shared objects of one running service, created once at start-up by `createRuntime`.
 * Each folder adds the part it owns by augmenting this interface next to its own contract, as
 * it does `RequestState`: the tenants table (`lib/tenancy/directory.ts`), the rate counters
 * (`lib/ratelimit/budget.ts`), the declared paths (`lib/documents/declared-index-paths.ts`) and
 * statement shapes (`lib/documents/statements.ts`),
 * the project settings (`lib/facilities/settings.ts`) and the traces (`lib/tracing/tracing.ts`).
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
