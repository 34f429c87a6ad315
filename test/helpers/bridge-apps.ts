import test from 'ava';
import { createServer, type Server } from 'node:http';
import express from 'express';
import compose from 'koa-compose';
import { bodyParsers, bridgeHandler, type RouteHandler } from '../../lib/bridge/index.ts';
import type { BodyParserOptions } from '../../lib/bridge/index.ts';
import type Koa from 'koa';
import { projectsArea } from '../../lib/projects/mount.ts';
import { Router } from '../../lib/routes/router.ts';
import type { LogEntry } from '../../lib/testing/logs.ts';
import { collectingLogger, entryApp, listenOnLoopback } from './koa-app.ts';

/** The project both apps serve, mounted where the service mounts it: it becomes `req.baseUrl`. */
const PROJECT = 'demo';
export const MOUNT = `/api/${PROJECT}`;

/**
 * Small body limits, to reach them cheaply; the service's default handler time limit (30 s),
 * which only the tests of the limit shorten: a file holding ~100 tests, all in flight at once on
 * a loaded machine, took more than 2 s to begin a `sendFile` answer, and got a 504.
 */
export const LIMITS = { jsonBytes: 2048, fileBytes: 64 * 1024, files: 3, handlerMs: 30_000, queueMs: 2000, resultBytes: 67_108_864, answerStallMs: 120_000 };

/** One route served by both apps: the same functions, run by Express and by the bridge. */
export interface RouteCase {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  handlers: RouteHandler[];
  /** Bridge app only: Koa middleware after the bridged functions (what `next()` reaches). */
  koaTail?: Koa.Middleware;
}

export interface RunningApp {
  readonly url: string;
  /** Its log lines so far, parsed (none for Express). */
  readonly logs: () => LogEntry[];
  close(): Promise<void>;
}

export interface BridgeAppOptions extends BodyParserOptions {
  handlerMs?: number;
  limits?: Partial<typeof LIMITS>;
  /** `http.trustProxy`: take the client address from X-Forwarded-For. */
  trustProxy?: boolean;
}

/**
 * The bridge the way the service runs it: a bare Koa app with the real entry (request id, log
 * line, error answers), project router (matching, params, 405s), body parsers and `bridgeHandler`, routes
 * under `MOUNT`.
 */
export async function startBridgeApp(routes: readonly RouteCase[], options: BridgeAppOptions = {}): Promise<RunningApp> {
  const { logger, logs } = collectingLogger();
  const limits = { ...LIMITS, ...options.limits, handlerMs: options.handlerMs ?? LIMITS.handlerMs };
  const parsers = bodyParsers(limits, options);
  const router = new Router(PROJECT);
  for (const route of routes) {
    const steps = route.handlers.map((handler) => bridgeHandler(handler, { handlerMs: limits.handlerMs, logger }));
    if (route.koaTail) steps.push(route.koaTail);
    router.add(route.method, route.path, compose([parsers.fields, parsers.multipart, ...steps]));
  }
  const app = entryApp({ logger, area: projectsArea(new Map([[PROJECT, router]])), proxy: options.trustProxy ?? false });
  return listen(createServer(app.callback()), logs.entries);
}

/** The oracle: Express 5 with its own body parsers at the same limits, routes under `MOUNT`. */
export async function startExpressApp(routes: readonly RouteCase[], options: { trustProxy?: boolean | number } = {}): Promise<RunningApp> {
  const app = express();
  app.set('trust proxy', options.trustProxy ?? false);
  app.disable('x-powered-by');
  app.set('env', 'test'); // Express would print every handler error to stderr otherwise
  const router = express.Router();
  const limit = LIMITS.jsonBytes;
  router.use(express.json({ limit }), express.urlencoded({ limit }), express.text({ limit }));
  for (const route of routes) {
    router[route.method](route.path, ...(route.handlers as unknown as express.RequestHandler[]));
  }
  app.use(MOUNT, router);
  return listen(createServer(app), () => []);
}

async function listen(server: Server, logs: () => LogEntry[]): Promise<RunningApp> {
  return { ...(await listenOnLoopback(server)), logs };
}

/** Parsed log lines of a bridge app. */
export function logEntries(app: RunningApp): LogEntry[] {
  return app.logs();
}

/** Both apps serving `routes`, for the whole test file: started before its tests, closed after. */
export function bothAppsForFile(routes: readonly RouteCase[]): { express: () => RunningApp; bridge: () => RunningApp } {
  let apps: [RunningApp, RunningApp] | undefined;
  test.before(async () => {
    apps = await Promise.all([startExpressApp(routes), startBridgeApp(routes)]);
  });
  test.after.always(async () => {
    await Promise.all(apps?.map((app) => app.close()) ?? []);
  });
  const started = (index: 0 | 1) => () => {
    if (apps === undefined) throw new Error('bothAppsForFile: the apps start before the tests');
    return apps[index];
  };
  return { express: started(0), bridge: started(1) };
}
