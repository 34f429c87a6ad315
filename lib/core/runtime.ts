import type { KeyObject } from 'node:crypto';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import type { Config, Secrets } from '../config/index.ts';
import type { SqlFragment } from '../db/statement.ts';
import type { StatementTracer, TenantDatabase } from '../db/tenant-database.ts';
import type { ServiceMetrics } from '../metrics/index.ts';
import type { Logger } from '../logger/index.ts';

/** The tenants table as the tenant step reads it (SPEC §4.1), cached. */
export interface TenantLookup {
  /** True for a tenant already seen: the common case, answered without a promise. */
  isKnown(name: string): boolean;
  exists(name: string): Promise<boolean>;
}

/** A rate limit's name and budget: `max` requests per key in each window of `windowMs`. */
export interface RateLimitBudget {
  readonly name: string;
  readonly windowMs: number;
  readonly max: number;
}

/** How much of a budget a request found spent, itself included, and when the window resets. */
export interface Spent {
  readonly consumed: number;
  readonly msBeforeReset: number;
}

/** Counts a request against its key's budget: at once in memory, through Redis when shared. */
export type RateCounter = (key: string) => Spent | Promise<Spent>;

/** The rate limits' counters (`lib/ratelimit`): limits of the same name and budget share one. */
export interface RateCounters {
  counterFor(budget: RateLimitBudget): RateCounter;
}

/** A project's setting values by name, as `defineSettings` declared them. */
export type SettingValuesByName = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * The values of each loaded project's settings (`lib/facilities/settings.ts`), bound as the
 * project loads, before its route file is imported. `settings` is what `defineSettings` returned.
 */
export interface ProjectSettingValues {
  bind(project: string, settings: object, values: SettingValuesByName): void;
  /** Undefined for settings no loaded project declares. */
  valuesOf(settings: object): SettingValuesByName | undefined;
  /** None when the project declares no settings. */
  valuesOfProject(project: string): SettingValuesByName;
}

/**
 * How the document store writes a collection's filters and sorts on the paths a project declared
 * an index on (`api/indexes.js`; lib/documents/declared-paths.ts): on the index's own key
 * expressions, with the same results.
 */
export interface DeclaredPaths {
  /** `filter` compiled, its declared paths' conditions on their index keys; `compileRest` compiles any part as usual. */
  compileFilter(filter: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment;
  /** `filter` as disjoint conditions to read one by one, each in order from an index; undefined when no declared path is in it. */
  branches(filter: unknown, sort: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment[] | undefined;
  /** The ORDER BY terms of `path` when it is declared, else undefined. */
  sortTerm(path: readonly string[], direction: 'asc' | 'desc'): SqlFragment | undefined;
}

/**
 * A collection's declared paths (lib/documents/declared-paths.ts). A document can match a filter
 * through an array on a declared path, which the index cannot show, so reads recheck documents
 * holding one, unless they assume, for one tenant, that none does on the paths where none was
 * seen: such a read's statement proves it, or fails (`DeclaredPathsHoldArrays`, errors.ts).
 */
export interface CollectionDeclaredPaths extends DeclaredPaths {
  /** These paths, for one read of `tenant`'s documents that leaves out the recheck where no array was seen. */
  assumingNoArrays(tenant: string): DeclaredPaths;
  /** The database showed these paths of `tenant`'s collection to hold arrays: its reads recheck them from now on. */
  holdArrays(tenant: string, paths: readonly string[]): void;
}

/** A declared unique index the start-up build could not make (documents already break it). */
export interface UnbuiltIndex {
  readonly project: string;
  readonly collection: string;
  readonly index: string;
}

/**
 * The declared paths of each collection, bound once as the projects are mounted; none before.
 * Also the collections whose declared unique index could not be built: writes to them are refused.
 */
export class DeclaredIndexPaths {
  #byCollection: ReadonlyMap<string, CollectionDeclaredPaths> = new Map();
  readonly #unbuilt = new Map<string, UnbuiltIndex>();

  unbuilt(): readonly UnbuiltIndex[] {
    return [...this.#unbuilt.values()];
  }

  markUnbuilt(index: UnbuiltIndex): void {
    this.#unbuilt.set(index.collection, index);
  }

  /** The unique index that was to guard writes to `collection` and could not be built, if any. */
  unguarded(collection: string): UnbuiltIndex | undefined {
    return this.#unbuilt.get(collection);
  }

  bind(byCollection: ReadonlyMap<string, CollectionDeclaredPaths>): void {
    this.#byCollection = byCollection;
  }

  of(collection: string): CollectionDeclaredPaths | undefined {
    return this.#byCollection.get(collection);
  }
}

/** What facilities read of a service: `make routes` loads route files with these alone. */
export interface FacilityState {
  readonly config: Config;
  readonly projectSettings: ProjectSettingValues;
}

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

/** Traces (`lib/tracing`), started when the `OTEL_*` variables ask for them. */
export interface Tracing {
  /** `serve` with each request under a server span of its own, active while it is served. */
  traced(serve: Middleware): Middleware;
  /** Runs a statement under a span of its own, which holds its text and never its values. */
  readonly traceStatement: StatementTracer;
  /** `traceId` and `spanId` of the active span, for a log line; none outside a span. */
  logFields(): Record<string, string>;
  /** Exports the spans not yet sent, then stops. */
  shutdown(): Promise<void>;
}

/** The shared objects of one running service, created once at start-up by `createRuntime`. */
export interface Runtime extends FacilityState {
  readonly secrets: Secrets;
  /** The database as the migrating owner sees it: migrations, tools and tests, never tenant data. */
  readonly knex: Knex;
  /** Where session work goes (migrations, index builds): `DATABASE_DIRECT_URL`, else the database's own URL. */
  readonly sessionUrl: string;
  /** Where every statement on tenant data runs: the restricted role, under row-level security. */
  readonly tenantDatabase: TenantDatabase;
  readonly logger: Logger;
  readonly tenants: TenantLookup;
  readonly rateCounters: RateCounters;
  /** What the document store writes on declared index keys, by collection (`api/indexes.js`). */
  readonly declaredPaths: DeclaredIndexPaths;
  /** What `GET /metrics` shows, recorded only when `METRICS_TOKEN` is set (undefined otherwise). */
  readonly metrics: ServiceMetrics | undefined;
  readonly readiness: Readiness;
  /** The JWT secret as a prebuilt key, so verifying a token does not rebuild it each time. */
  readonly jwtKey: KeyObject;
  /** Undefined when traces are off: the request path then pays nothing for them. */
  readonly tracing?: Tracing;
  /** Closed in reverse order on shutdown, after the HTTP server has drained; complete at start-up. */
  readonly shutdownTasks: ReadonlyArray<() => Promise<void>>;
}
