import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import express from 'express';
import { listenOnLoopback, type ListeningApp } from './koa-app.ts';
import { startMain, type MainProcess } from './main-process.ts';
import { fixtureProjects } from './projects.ts';
import { dropTestDatabase } from './service.ts';
import { scratchFolder } from './scratch.ts';

/**
 * The project of test/fixtures/projects/middleware: webhook and upload routes that run Express's
 * body middleware (`express.raw`, `express.json`, multer...) or read the raw stream, served by
 * the real service in a process of its own (so that an exception escaping a request shows as a
 * dead process) and by Express 5, the oracle.
 */
export const HOOKS = '/api/hooks';

const PROJECTS_DIR = fixtureProjects('middleware');
const ROUTES_FILE = path.join(PROJECTS_DIR, 'hooks', 'api', 'routes.js');

interface FixtureRoute {
  method: string;
  path: string;
  auth?: express.RequestHandler;
  function: express.RequestHandler;
}

/** The service process serving the fixture, and what its log says. */
export interface HooksService {
  readonly url: string;
  readonly port: number;
  /** True until the process has exited. */
  running(): boolean;
  /** The log lines that report an exception no request caught. */
  uncaughtExceptions(): string[];
  /** Every log line written so far. */
  logLines(): readonly string[];
  /**
   * `GET /healthz`'s status (0 when nothing answered), asked again for up to 15 s while it is
   * 503: on a loaded machine the database can be slower than the service's statement limit.
   */
  health(): Promise<number>;
}

/**
 * The service over the fixture for the whole test file, the public rate limit lifted (every
 * request comes from one address) and handlers given `handlerMs`; stopped after the file.
 */
export function hooksServiceForFile(handlerMs: number): () => HooksService {
  let main: MainProcess | undefined;
  let service: HooksService | undefined;
  test.before(async () => {
    main = await startMain(undefined, { PROJECTS_DIR, EXPERT_CONFIG: expertFile(handlerMs) });
    service = hooksService(main);
    await untilServed(() => fetch(`${service?.url}${HOOKS}/flags`, { method: 'POST' }));
  });
  test.after.always(async () => {
    if (main !== undefined && service?.running()) await stop(main);
    await dropTestDatabase();
  });
  return () => {
    if (service === undefined) throw new Error('hooksServiceForFile: the service starts before the tests');
    return service;
  };
}

/** SIGTERM, then SIGKILL if the process is still there after 15 s. */
async function stop(main: MainProcess): Promise<void> {
  main.child.kill('SIGTERM');
  const killer = setTimeout(() => main.child.kill('SIGKILL'), 15_000);
  await main.exited;
  clearTimeout(killer);
}

function hooksService(main: MainProcess): HooksService {
  const { child, url, lines } = main;
  return {
    url,
    port: Number(new URL(url).port),
    running: () => child.exitCode === null && child.signalCode === null,
    uncaughtExceptions: () => lines.filter((line) => line.includes('"uncaught exception"')),
    logLines: () => lines,
    health: () => untilServed(() => fetch(`${url}/healthz`)),
  };
}

const SERVED_WITHIN_MS = 15_000;

/**
 * The status of `request`, asked again while it is 503 (a database slower than the statement
 * limit: the tenant's first lookup, or /healthz, on a loaded machine); 0 when nothing answers.
 */
async function untilServed(request: () => Promise<Response>): Promise<number> {
  const deadline = Date.now() + SERVED_WITHIN_MS;
  for (;;) {
    const status = await request().then(
      (response) => response.status,
      () => 0,
    );
    if (status !== 503 || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function expertFile(handlerMs: number): string {
  const file = path.join(scratchFolder('hooks'), 'expert.json');
  writeFileSync(file, JSON.stringify({ rateLimit: { public: { windowMs: 60_000, max: 1_000_000 } }, limits: { handlerMs } }));
  return file;
}

/** The fixture's routes, loaded as the service loads them. */
export async function hooksRoutes(): Promise<FixtureRoute[]> {
  const { default: routes } = (await import(pathToFileURL(ROUTES_FILE).href)) as { default: FixtureRoute[] };
  return routes;
}

/** Express 5 serving the fixture's route functions at the same URLs, with no body parser of its own. */
export async function startExpressHooks(): Promise<ListeningApp> {
  const routes = await hooksRoutes();
  const app = express();
  app.disable('x-powered-by');
  app.set('env', 'test'); // Express would print every handler error to stderr otherwise
  for (const route of routes) {
    const functions = route.auth === undefined ? [route.function] : [route.auth, route.function];
    app.post(`${HOOKS}${route.path}`, ...functions); // every fixture route is a POST
  }
  return listenOnLoopback(createServer(app));
}
