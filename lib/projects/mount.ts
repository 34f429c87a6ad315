import type { Context } from 'koa';
import { systemAuthentication } from '../auth/system-auth.ts';
import { bodyParsers, bridgeHandler, type RouteHandler } from '../bridge/index.ts';
import { exchangeFor } from '../bridge/handler.ts';
import { nothingAnswers } from '../core/errors.ts';
import type { Runtime } from '../core/runtime.ts';
import type { AreaTraits } from '../routes/declaration.ts';
import { routeRateLimits, routeChain, type ChainSettings } from '../routes/chain.ts';
import { listRoutes, type ListedRoute } from '../routes/route-table.ts';
import { Router } from '../routes/router.ts';
import type { ProjectDefinition } from './load.ts';
import { refererValidation } from './referer.ts';
import type { IndexDeclaration } from '../documents/index-keys.ts';

/** The segment of `/api/project`, where the default project answers too. */
export const DEFAULT_MOUNT = 'project';

/** `/api/<project>` as it appeared in the URL, and the rest of the path. */
const MOUNT = /^(\/[^/]+\/([^/]+))(\/.*)?$/;

export interface LoadedProjects {
  /** What `make routes` and `/openapi.json` describe: every route with the URLs it answers at. */
  readonly routes: readonly ListedRoute[];
  /** Answers `/api/...` requests: the project's route, or 404/405. */
  readonly area: (ctx: Context) => Promise<void>;
  /** The methods a path under `/api` answers (what a CORS preflight is told); none for an unknown one. */
  readonly methodsOf?: (path: string) => readonly string[];
  /** The indexes every project declares (`api/indexes.js`), for the start-up build. */
  readonly indexes?: readonly IndexDeclaration[];
}

/** What project routes share: a tenant, every body read by the bridge's parsers, handlers run by the bridge. */
export function projectTraits(referer: boolean): AreaTraits {
  return { kind: 'project', tenant: true, referer, everyRouteReadsBody: true, handlerErrors: [500, 503, 504], switchable: false };
}

/** Composes every route's chain once and builds the per-project routers (SPEC §8.2, §8.3). */
export function mountProjects(runtime: Runtime, projects: readonly ProjectDefinition[], defaultProject: string | undefined): LoadedProjects {
  const settings = projectChainSettings(runtime);
  const routers = new Map<string, Router>();
  for (const project of projects) {
    const router = new Router(project.name);
    for (const route of project.routes) router.add(route.method, route.path, routeChain(route, settings), route.security);
    routers.set(project.name, router);
    if (project.name === defaultProject) routers.set(DEFAULT_MOUNT, router);
  }
  const routes = projectRouteTable(projects, defaultProject, runtime.config.referer.enabled);
  const indexes = Object.freeze(projects.flatMap((project) => project.indexes));
  return Object.freeze({ routes, area: projectsArea(routers), methodsOf: projectMethods(routers), indexes });
}

function projectChainSettings(runtime: Runtime): ChainSettings<RouteHandler> {
  const { config, logger } = runtime;
  const bodies = bodyParsers(config.limits);
  return {
    traits: projectTraits(config.referer.enabled),
    referer: config.referer.enabled ? refererValidation(config.referer) : undefined,
    rateLimit: routeRateLimits(runtime),
    systemAuthentication: systemAuthentication(runtime),
    readFields: bodies.fields,
    readFieldsWithBytes: bodies.fieldsWithBytes,
    readFiles: bodies.multipart,
    readPart: (ctx, part) => exchangeFor(ctx).req[part],
    invoke: (handler) => bridgeHandler(handler, { handlerMs: config.limits.handlerMs, logger }),
  };
}

/** Every project route with the URLs it answers at, as `make routes` and `/openapi.json` list them. */
export function projectRouteTable(projects: readonly ProjectDefinition[], defaultProject: string | undefined, referer: boolean): readonly ListedRoute[] {
  const traits = projectTraits(referer);
  return Object.freeze(
    projects.flatMap((project) => {
      const mounts = (project.name === defaultProject ? [project.name, DEFAULT_MOUNT] : [project.name]).map((mount) => `/api/${mount}`);
      return listRoutes(project.routes, traits, { mounts, project: project.name, file: project.file });
    }),
  );
}

/** One map lookup by the URL's second segment (SPEC §8.2): routing costs the same with 500 projects as with one. */
export function projectsArea(routers: ReadonlyMap<string, Router>): (ctx: Context) => Promise<void> {
  return (ctx) => {
    const found = projectRouterOf(routers, ctx.path);
    if (found === undefined) throw nothingAnswers(ctx.method);
    return found.router.dispatch(ctx, found.baseUrl, found.rest);
  };
}

function projectMethods(routers: ReadonlyMap<string, Router>): (path: string) => readonly string[] {
  return (path) => {
    const found = projectRouterOf(routers, path);
    return found === undefined ? [] : found.router.methodsOf(found.rest);
  };
}

/** The router of the project a path names, its mount as it appeared (`/api/Sample`) and the rest of the path. */
function projectRouterOf(routers: ReadonlyMap<string, Router>, path: string): { router: Router; baseUrl: string; rest: string } | undefined {
  const mount = MOUNT.exec(path);
  const router = mount === null ? undefined : routers.get((mount[2] as string).toLowerCase());
  if (mount === null || router === undefined) return undefined;
  return { router, baseUrl: mount[1] as string, rest: mount[3] ?? '/' };
}
