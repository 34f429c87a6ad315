import type { ExpertConfig } from './schema.ts';

/**
 * The resolved configuration: environment, expert file and defaults, deeply frozen.
 * It holds no secret: the JWT secret and the database URL live in `Secrets`.
 */
export interface Config extends ExpertConfig {
  readonly port: number;
  readonly host: string;
  readonly projectsDir: string;
  readonly dataDir: string;
  readonly logLevel: string;
  /** `DATABASE_POOL_MAX`, `DATABASE_CONNECT_TIMEOUT_MS`, `DATABASE_PREPARED_STATEMENTS`. */
  readonly database: { readonly embedded: boolean; readonly poolMax: number; readonly connectTimeoutMs: number; readonly preparedStatements: boolean };
  /** Whether rate limits are shared through Redis, and whether that Redis is a cluster (REDIS_CLUSTER_NODES). */
  readonly redis: { readonly enabled: boolean; readonly cluster: boolean };
}

export interface Secrets {
  readonly jwtSecret: string;
  /** Absent when the service runs its embedded PostgreSQL. */
  readonly databaseUrl: string | undefined;
  /** `DATABASE_DIRECT_URL`: a session connection for migrations' and tools' locks, when `databaseUrl` names a transaction-mode pooler. */
  readonly databaseDirectUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** The seed nodes of a Redis Cluster (`REDIS_CLUSTER_NODES`), instead of `redisUrl`. */
  readonly redisClusterNodes: readonly string[] | undefined;
  /** The bearer token `GET /metrics` asks for (`METRICS_TOKEN`); absent, there are no metrics. */
  readonly metricsToken: string | undefined;
  readonly projectSettings: ProjectSettingSources;
}

/** What projects' settings are read from (SPEC §8.7), kept apart from `Config` since they hold secrets. */
export interface ProjectSettingSources {
  /** The top-level sections of the expert configuration that are not built in, as written. */
  readonly sections: Readonly<Record<string, unknown>>;
  /** The environment the service started with (secrets are read from it). */
  readonly environment: Readonly<Record<string, string | undefined>>;
}

export interface LoadedConfig {
  readonly config: Config;
  readonly secrets: Secrets;
}
