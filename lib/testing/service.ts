import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { verifySystemToken, type TokenClaims } from '../auth/tokens.ts';
import { DEFAULT_DATA_DIR, type ExpertInput } from '../config/index.ts';
import { documentStore, type DocumentStore } from '../documents/index.ts';
import type { SettingValue } from '../facilities/settings.ts';
import { startService, type Service, type StartOptions as ServiceOptions } from '../server.ts';
import { createTenant } from '../tenancy/index.ts';
import { freshTestDatabase, type FreshDatabase, TEST_QUEUE_MS } from './database.ts';
import { collectLogs, type LogEntry } from './logs.ts';
import { projectsFolder, type ProjectsFolder } from './project-folder.ts';
import { requestHelpers, type RequestHelpers } from './requests.ts';
import { createUser, type TestUser, type UserFields } from './users.ts';

export interface StartOptions {
  /** The project to serve: its name in PROJECTS_DIR (default `./projects`), or its folder (a path or a URL). */
  project?: string | URL;
  /** Serve every project of this folder instead. */
  projectsDir?: string | URL;
  /** The project's settings, as under its name in the expert configuration (secrets included). */
  settings?: Readonly<Record<string, SettingValue>>;
  /** The rest of the expert configuration (SPEC §3). */
  expert?: ExpertInput;
  /** Environment variables the service sees (`SHOP_API_KEY`, `LOG_LEVEL`...); `process.env` is left alone. */
  env?: Readonly<Record<string, string>>;
  /** The test's tenant, created with the database; default `test`. */
  tenant?: string;
  /** The test's user, created in that tenant; default a member with a random password. */
  user?: UserFields;
}

export interface TestService extends RequestHelpers {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The project served, when `project` was given. */
  readonly project: string | undefined;
  readonly tenant: string;
  readonly user: TestUser;
  /** The project's resolved settings, defaults included. */
  readonly settings: Readonly<Record<string, SettingValue | undefined>>;
  /** Creates (or updates) an account, in the test's tenant unless another is named. */
  createUser(fields?: UserFields, options?: { tenant?: string }): Promise<TestUser>;
  /** Creates a tenant (nothing happens when it exists). */
  createTenant(name: string): Promise<void>;
  /**
   * Someone else calling: a new tenant (or `tenant`, created when missing) with a user of its
   * own, and requests sent in that tenant. Every request of a test comes from 127.0.0.1, and a
   * rate limit counts by address and tenant, or by user: a caller's budgets are its own.
   */
  caller(options?: { tenant?: string; user?: UserFields }): Promise<TestCaller>;
  /** The documents of a tenant (the test's by default), as handlers see them through `db`. */
  documents(tenant?: string): DocumentStore;
  /** The claims of a system JWT this service signed (HS256, not expired); throws otherwise. */
  verifyToken(token: string): TokenClaims;
  /** Every log line of the service so far, parsed. */
  logs(): LogEntry[];
  /** The same lines as written, to look for what must not be there (a secret). */
  logText(): string;
  /** Stops the service and drops its database; calling it again waits for the first call. */
  close(): Promise<void>;
}

/** Requests of a caller of its own (`caller()`): its tenant, and a user in it. */
export interface TestCaller extends RequestHelpers {
  readonly tenant: string;
  readonly user: TestUser;
}

/**
 * Starts the real service on a free loopback port over a new, migrated database (on
 * DATABASE_URL's server, or the embedded one), with a tenant and a user in it.
 */
export async function start(options: StartOptions = {}): Promise<TestService> {
  const folder = projectsFolder(options.project, options.projectsDir);
  const dataDir = testDataFolder();
  const removeFolders = () => {
    for (const scratch of [folder.scratch, dataDir]) if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  };
  const database = await freshTestDatabase();
  let service: LoggedService;
  try {
    service = await startLoggedService({
      env: serviceEnvironment(options, folder, dataDir, database),
      expert: expertConfiguration(options, folder),
      // At load 39 on 2 cores, creating the test's tenant took more than the service's 1.5 s: 'Query read timeout'.
      queryTimeoutMs: TEST_QUERY_TIMEOUT_MS,
    });
  } catch (error) {
    await database.drop();
    removeFolders();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= service.close().then(async () => {
      await database.drop();
      removeFolders();
    });
    return closing;
  };
  return testService(service, options, folder, close);
}

/** The real service with its log lines kept in memory, as `start` runs it (and the service's own tests). */
export interface LoggedService extends Service {
  /** Every log line of the service so far, parsed. */
  logs(): LogEntry[];
  /** The same lines as written. */
  logText(): string;
}

/** Starts the real service (`startService`) writing its log lines into memory instead of stdout. */
export async function startLoggedService(options: Omit<ServiceOptions, 'logDestination'>): Promise<LoggedService> {
  const logs = collectLogs();
  const service = await startService({ ...options, logDestination: logs.destination });
  return { ...service, logs: logs.entries, logText: logs.text };
}

/** Inside the default data folder (`./.data/testing/...`): a handler meets the same dot-folder path as by default. */
function testDataFolder(): string {
  const parent = path.resolve(DEFAULT_DATA_DIR, 'testing');
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  return mkdtempSync(path.join(parent, 'data-'));
}

function serviceEnvironment(options: StartOptions, folder: ProjectsFolder, dataDir: string, database: FreshDatabase): Record<string, string> {
  return {
    LOG_LEVEL: 'info',
    // Tests run beside other work (the rest of a suite, other suites): on a loaded machine a new
    // connection took longer than the service's 1.5 s, and requests answered 503.
    DATABASE_CONNECT_TIMEOUT_MS: '10000',
    ...options.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    PROJECTS_DIR: folder.projectsDir,
    // A folder of the test's own unless the test names one.
    DATA_DIR: options.env?.DATA_DIR ?? dataDir,
  };
}

function expertConfiguration(options: StartOptions, folder: ProjectsFolder): ExpertInput {
  const expert = withTestQueue(options.expert ?? {});
  if (options.settings === undefined) return expert;
  if (folder.project === undefined) throw new TypeError('spaceport/testing: `settings` needs `project` (with `projectsDir`, give them in `expert`)');
  return { ...expert, [folder.project]: options.settings };
}

/** How long a query of a test's service may go unanswered before it is a 503 (the service's own: 1.5 s). */
const TEST_QUERY_TIMEOUT_MS = 10_000;

/**
 * `expert` with `limits.queueMs` at 30 s unless it sets one: at load 13 on 2 cores, 20 concurrent requests of one
 * tenant waited more than the service's 2 s for its share and answered 503, though the test was not about the share.
 */
export function withTestQueue(expert: ExpertInput): ExpertInput {
  return { ...expert, limits: { queueMs: TEST_QUEUE_MS, ...expert.limits } };
}

let callersMade = 0;

async function testService(service: LoggedService, options: StartOptions, folder: ProjectsFolder, close: () => Promise<void>): Promise<TestService> {
  const { runtime } = service;
  const tenant = options.tenant ?? 'test';
  try {
    await createTenant(runtime.knex, tenant);
    const user = await createUser(runtime, tenant, options.user);
    return Object.freeze({
      ...requestHelpers(service.url, tenant),
      url: service.url,
      project: folder.project,
      tenant,
      user,
      settings: folder.project === undefined ? {} : runtime.projectSettings.valuesOfProject(folder.project),
      createUser: (fields?: UserFields, where: { tenant?: string } = {}) => createUser(runtime, where.tenant ?? tenant, fields),
      createTenant: async (name: string) => {
        await createTenant(runtime.knex, name);
      },
      caller: async ({ tenant: named, user: fields }: { tenant?: string; user?: UserFields } = {}) => {
        const callerTenant = named ?? `caller-${++callersMade}`;
        await createTenant(runtime.knex, callerTenant);
        return Object.freeze({ ...requestHelpers(service.url, callerTenant), tenant: callerTenant, user: await createUser(runtime, callerTenant, fields) });
      },
      documents: (name = tenant) => documentStore(runtime.tenantDatabase, name),
      verifyToken: (token: string) => verifySystemToken(runtime, token),
      logs: service.logs,
      logText: service.logText,
      close,
    });
  } catch (error) {
    await close();
    throw error;
  }
}
