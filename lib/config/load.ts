import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { deepFreeze } from '../values/deep-freeze.ts';
import { keptSecret } from './kept-secret.ts';
import { BUILT_IN_SECTIONS, environmentSchema, expertSchema, type Environment, type ExpertInput } from './schema.ts';
import type { Config, LoadedConfig } from './types.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DEFAULT_EXPERT_FILE = './config/expert.json';
const DEFAULT_PROJECTS_DIR = './projects';

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Expert settings given directly, used instead of the file (tests, tools). */
  expert?: ExpertInput;
}

export function loadConfig({ env = process.env, expert }: LoadOptions = {}): LoadedConfig {
  const givenEnvironment = withoutEmptyValues(env);
  const environment = parseWith(environmentSchema, givenEnvironment, 'environment variable ');
  if (environment.REDIS_URL !== undefined && environment.REDIS_CLUSTER_NODES !== undefined) {
    throw new ConfigError('environment variable REDIS_CLUSTER_NODES: set it or REDIS_URL, not both (one names a Redis Cluster, the other one Redis)');
  }
  if (environment.DATABASE_DIRECT_URL !== undefined && environment.DATABASE_URL === undefined) {
    throw new ConfigError('environment variable DATABASE_DIRECT_URL: needs DATABASE_URL too (without it the service runs its embedded PostgreSQL)');
  }
  const { builtIn, projectSections } = splitSections(expert ?? readExpertFile(environment.EXPERT_CONFIG));
  const expertSettings = parseWith(expertSchema, builtIn, 'expert configuration: ');
  checkTenantShare(expertSettings.limits.tenantConnections, environment.DATABASE_POOL_MAX);
  const config: Config = {
    ...expertSettings,
    // Optional, yet a key of every configuration, as the other sections are (`config` lists it).
    cors: expertSettings.cors,
    port: environment.PORT,
    host: environment.HOST,
    projectsDir: projectsDirFrom(environment),
    dataDir: path.resolve(environment.DATA_DIR),
    logLevel: environment.LOG_LEVEL,
    database: { embedded: environment.DATABASE_URL === undefined, poolMax: environment.DATABASE_POOL_MAX, connectTimeoutMs: environment.DATABASE_CONNECT_TIMEOUT_MS, preparedStatements: environment.DATABASE_PREPARED_STATEMENTS },
    redis: { enabled: environment.REDIS_URL !== undefined || environment.REDIS_CLUSTER_NODES !== undefined, cluster: environment.REDIS_CLUSTER_NODES !== undefined },
  };
  return {
    config: deepFreeze(config),
    secrets: Object.freeze({
      jwtSecret: environment.JWT_SECRET ?? persistedJwtSecret(config.dataDir),
      databaseUrl: environment.DATABASE_URL,
      databaseDirectUrl: environment.DATABASE_DIRECT_URL,
      redisUrl: environment.REDIS_URL,
      redisClusterNodes: environment.REDIS_CLUSTER_NODES && Object.freeze(environment.REDIS_CLUSTER_NODES),
      metricsToken: environment.METRICS_TOKEN,
      projectSettings: Object.freeze({ sections: projectSections, environment: Object.freeze(givenEnvironment) }),
    }),
  };
}

function checkTenantShare(tenantConnections: number | undefined, poolMax: number): void {
  if (tenantConnections === undefined || tenantConnections <= poolMax) return;
  throw new ConfigError(`expert configuration: limits.tenantConnections: ${tenantConnections} is more than the pool holds (DATABASE_POOL_MAX is ${poolMax}); a tenant's share must be at most the pool`);
}

/** Projects' settings may hold secrets, so they stay out of `Config` and are checked against each project's declarations. */
function splitSections(input: unknown): { builtIn: unknown; projectSections: Readonly<Record<string, unknown>> } {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { builtIn: input, projectSections: {} };
  const entries = Object.entries(input);
  return {
    builtIn: Object.fromEntries(entries.filter(([key]) => BUILT_IN_SECTIONS.has(key))),
    projectSections: Object.freeze(Object.fromEntries(entries.filter(([key]) => !BUILT_IN_SECTIONS.has(key)))),
  };
}

/**
 * PROJECTS_DIR as an absolute path. One named that is not a folder is a typo, refused as a missing
 * EXPERT_CONFIG is: the service would start with no project routes. The default may be missing.
 */
export function projectsDirFrom(env: { readonly PROJECTS_DIR?: string | undefined }): string {
  const named = env.PROJECTS_DIR || undefined;
  if (named !== undefined && statSync(named, { throwIfNoEntry: false })?.isDirectory() !== true) throw new ConfigError(`PROJECTS_DIR: folder ${named} does not exist`);
  return path.resolve(named ?? DEFAULT_PROJECTS_DIR);
}

/** `PORT=` or `DATABASE_URL=` set to nothing means "not set", as in most tools (not port 0). */
function withoutEmptyValues(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}

function readExpertFile(explicitPath: string | undefined): unknown {
  const file = explicitPath ?? DEFAULT_EXPERT_FILE;
  if (!existsSync(file)) {
    if (explicitPath !== undefined) throw new ConfigError(`EXPERT_CONFIG: file ${file} does not exist`);
    return {};
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`expert configuration ${file}: not valid JSON (${(error as Error).message})`);
  }
}

function parseWith<Schema extends z.ZodType>(schema: Schema, input: unknown, prefix: string): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => `${prefix}${[...issue.path, key].join('.')}: unknown key`)
      : [`${prefix}${issue.path.join('.') || '(root)'}: ${issue.message}`],
  );
  throw new ConfigError(problems.join('; '));
}

function persistedJwtSecret(dataDir: string): string {
  const file = path.join(dataDir, 'jwt-secret');
  const secret = keptSecret(file, 48);
  if (secret.length < 16) throw new ConfigError(`${file}: the kept JWT secret is shorter than 16 characters; delete the file to have a new one made`);
  return secret;
}

export type { Environment };
