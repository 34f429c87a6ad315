import createError from 'http-errors';
import Koa from 'koa';
import { auditArea } from './audit/routes.ts';
import { loginArea } from './auth/routes.ts';
import { systemAuthentication } from './auth/system-auth.ts';
import type { Config } from './config/index.ts';
import type { Area } from './core/area.ts';
import { nothingAnswers } from './core/errors.ts';
import { jsonBody } from './routes/json-body.ts';
import type { Runtime } from './core/runtime.ts';
import type { Pace } from './http/pace.ts';
import { withCrossOrigin, type PathMethods } from './http/cors.ts';
import { requestEntry, type EntryOptions } from './http/entry.ts';
import { systemArea } from './system/routes.ts';
import type { LoadedProjects } from './projects/index.ts';
import { routeChain, routeRateLimits, type ChainSettings } from './routes/chain.ts';
import { listRoutes, type ListedRoute } from './routes/route-table.ts';
import { paramsOf, Router } from './routes/router.ts';
import type { ServiceAreaDeclaration, ServiceHandler, ServiceParts } from './routes/service-area.ts';
import { spacesArea } from './spaces/routes.ts';
import { withTenant } from './tenancy/index.ts';

/** The service's own areas, each a router of declared routes; `/api` holds the projects' routers (`lib/projects`). */
const SERVICE_AREAS: readonly ServiceAreaDeclaration[] = [systemArea, loginArea, spacesArea, auditArea];
const PROJECTS_SEGMENT = 'api';

/**
 * One entry routing each request by its path's first segment to its area. Everything but the
 * system endpoints runs behind the tenant step, unknown paths included (400 before 404).
 */
export function createApp(runtime: Runtime, projects: LoadedProjects, bodyPace?: Pace): Koa {
  const routes = Object.freeze([...answeringServiceRoutes(runtime.config), ...projects.routes]);
  const parts = { runtime, routes: () => routes };
  const areas = new Map<string, Area>();
  for (const declared of SERVICE_AREAS) {
    const area = serviceArea(declared, parts);
    for (const segment of declared.segments) areas.set(segment, area);
  }
  areas.set(PROJECTS_SEGMENT, mount(runtime, { tenant: true, crossOrigin: true }, projects.area, projects.methodsOf ?? (() => [])));
  const otherwise = mount(runtime, { tenant: true }, (ctx) => {
    throw nothingAnswers(ctx.method);
  });
  return entryKoa({ logger: runtime.logger, runtime, areas, otherwise, bodyPace }, runtime.config.http.trustProxy);
}

/** The Koa app around the entry: the service's, and the tests' of one step at a time. */
export function entryKoa(entry: EntryOptions, trustProxy: boolean): Koa {
  // One trusted proxy: the client address is the last X-Forwarded-For entry, the one that proxy
  // appended; the entries before it are whatever the client sent.
  const app = new Koa({ proxy: trustProxy, maxIpsCount: 1 });
  app.silent = true;
  app.use(requestEntry(entry));
  return app;
}

/** How an area mounts: CORS first if it welcomes other origins, then the tenant step if it takes one. */
function mount(runtime: Runtime, mounting: { readonly tenant: boolean; readonly crossOrigin?: boolean }, answer: Area, methodsOf: PathMethods = () => []): Area {
  const area = mounting.tenant ? withTenant(runtime, answer) : answer;
  return mounting.crossOrigin === true ? withCrossOrigin(runtime.config, methodsOf, area) : area;
}

/** The service's own routes that answer with this configuration: a switched-off area's are not listed. */
export function answeringServiceRoutes(config: Config): readonly ListedRoute[] {
  const answering = SERVICE_AREAS.filter((area) => area.switchedOff?.(config) === undefined);
  return answering.flatMap((area) => listRoutes(area.routes, area.traits, { mounts: [''] }));
}

/** The areas switched off with this configuration, and why. */
export function switchedOffAreas(config: Config): { readonly segments: readonly string[]; readonly reason: string }[] {
  return SERVICE_AREAS.flatMap((area) => {
    const reason = area.switchedOff?.(config);
    return reason === undefined ? [] : [{ segments: area.segments, reason }];
  });
}

/** One of the service's own areas as the entry runs it: its router, or the switched-off 404. */
function serviceArea(declared: ServiceAreaDeclaration, parts: ServiceParts): Area {
  const offText = declared.switchedOff?.(parts.runtime.config);
  const router = offText === undefined ? serviceRouter(declared, parts) : undefined;
  const answer = router === undefined ? switchedOff(offText ?? '') : router.area();
  return mount(parts.runtime, { tenant: declared.traits.tenant, crossOrigin: declared.crossOrigin }, answer, (path) => router?.methodsOf(path) ?? []);
}

function serviceRouter(declared: ServiceAreaDeclaration, parts: ServiceParts): Router {
  const settings = serviceChainSettings(declared, parts);
  const router = new Router();
  for (const route of declared.routes) router.add(route.method, route.path, routeChain(route, settings), route.security);
  return router;
}

/** The service's own routes read JSON bodies (lib/core/request-body.ts) and run their handlers as Koa middleware. */
function serviceChainSettings({ traits }: ServiceAreaDeclaration, parts: ServiceParts): ChainSettings<ServiceHandler> {
  const { runtime } = parts;
  return {
    traits,
    referer: undefined,
    rateLimit: routeRateLimits(runtime),
    systemAuthentication: systemAuthentication(runtime),
    readFields: jsonBody(runtime.config.limits.jsonBytes),
    readFieldsWithBytes: undefined,
    readFiles: undefined,
    readPart: (ctx, part) => (part === 'params' ? paramsOf(ctx) : part === 'query' ? ctx.query : part === 'body' ? ctx.request.body : undefined),
    invoke: (handler) => handler(parts),
  };
}

function switchedOff(text: string): Area {
  return () => {
    throw createError(404, text);
  };
}
