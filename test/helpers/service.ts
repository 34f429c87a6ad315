import type { AnswerStall } from '../../lib/http/answer-stall.ts';
import test, { type ExecutionContext } from 'ava';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../lib/app.ts';
import type { ExpertInput } from '../../lib/config/index.ts';
import type { Pace } from '../../lib/http/pace.ts';
import type { Runtime } from '../../lib/core/runtime.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { startLoggedService, withTestQueue, type LoggedService } from '../../lib/testing/service.ts';
import { createMigratedDatabase } from './database.ts';
import { scratchFolder } from './scratch.ts';

export const TEST_JWT_SECRET = 'test-secret-of-a-decent-length-0123456789';

/**
 * The real service as the service's own tests drive it: `spaceport/testing`'s service with its
 * logs (project tests get its `TestService`), over the file's database, with plain `fetch`.
 */
export interface ServiceUnderTest extends LoggedService {
  fetch(pathname: string, init?: RequestInit): Promise<Response>;
}

export interface ServiceUnderTestOptions {
  expert?: ExpertInput;
  env?: Record<string, string>;
  /** Use this database URL instead of the file's fresh one. */
  databaseUrl?: string;
  /** See `StartOptions.bodyPace`. */
  bodyPace?: Pace;
  /** See `StartOptions.answerStall`. */
  answerStall?: AnswerStall;
  /** See `StartOptions.queryTimeoutMs` (the service's 1.5 s by default, which many tests here are about). */
  queryTimeoutMs?: number;
}

let fileDatabase: Promise<{ url: string; drop: () => Promise<void> }> | undefined;

/** One fresh database per test file (each ava file runs in its own process), already migrated. */
export function testDatabaseUrl(): Promise<string> {
  fileDatabase ??= createMigratedDatabase();
  return fileDatabase.then((database) => database.url);
}

/** Drops the file's database; register with `test.after.always(dropTestDatabase)`. */
export async function dropTestDatabase(): Promise<void> {
  if (fileDatabase) await (await fileDatabase).drop();
}

/** Starts the real service on an ephemeral port over the file's database; closed after the test. */
export async function startTestService(t: ExecutionContext | undefined, options: ServiceUnderTestOptions = {}): Promise<ServiceUnderTest> {
  const service = await startLoggedService({
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      JWT_SECRET: TEST_JWT_SECRET,
      DATABASE_URL: options.databaseUrl ?? (await testDatabaseUrl()),
      // An empty folder: no project routes.
      PROJECTS_DIR: scratchFolder('projects'),
      DATA_DIR: scratchFolder('data'),
      LOG_LEVEL: 'info',
      // On a busy machine (make test with other work beside it) a new connection took more than
      // the default 1.5 s, and tests failed with "database unavailable" (issue 37, point 11).
      DATABASE_CONNECT_TIMEOUT_MS: '10000',
      ...options.env,
    },
    expert: withTestQueue(options.expert ?? {}),
    bodyPace: options.bodyPace,
    answerStall: options.answerStall,
    queryTimeoutMs: options.queryTimeoutMs,
  });
  const testService: ServiceUnderTest = { ...service, fetch: (pathname, init) => fetch(new URL(pathname, service.url), init) };
  t?.teardown(() => service.close());
  return testService;
}

export interface FileServiceOptions extends ServiceUnderTestOptions {
  /** Tenants created before the tests run. */
  tenants?: readonly string[];
}

/**
 * One service for the whole test file: started (with `tenants` created) before its tests,
 * handed to `started` for the file to keep, and closed with the file's database after them.
 */
export function serviceForFile(options: FileServiceOptions, started: (service: ServiceUnderTest) => void | Promise<void>): void {
  let service: ServiceUnderTest | undefined;
  test.before(async () => {
    service = await startTestService(undefined, options);
    for (const tenant of options.tenants ?? []) await createTenant(service.runtime.knex, tenant);
    await started(service);
  });
  test.after.always(async () => {
    await service?.close();
    await dropTestDatabase();
  });
}

/**
 * The service's app, without projects, over `runtime` (a test's own stand-in for part of a started service's: another
 * database, a fresh tenant directory), on loopback; its URL. After the test the server closes, then each of `owned`.
 */
export async function serveOver(t: ExecutionContext, runtime: Runtime, ...owned: Array<() => Promise<unknown>>): Promise<string> {
  const server = createServer(createApp(runtime, { routes: [], area: async () => {} }).callback());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(async () => {
    server.close();
    for (const close of owned) await close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
