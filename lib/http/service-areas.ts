import createError from 'http-errors';
import type { Context } from 'koa';
import { loginArea } from '../auth/routes.ts';
import { systemAuthentication } from '../auth/system-auth.ts';
import { jsonBody } from '../routes/json-body.ts';
import type { AreaTraits } from '../routes/area-traits.ts';
import { routeRateLimits, routeChain, type ChainSettings } from '../routes/chain.ts';
import { listRoutes, type ListedRoute } from '../routes/route-table.ts';
import { paramsOf, Router } from '../routes/router.ts';
import type { ServiceAreaDeclaration, ServiceHandler, ServiceParts } from '../routes/service-area.ts';
import { spacesArea } from '../spaces/routes.ts';
import { auditArea } from '../audit/routes.ts';
import { withTenant } from '../tenancy/index.ts';
import type { Area } from '../core/area.ts';
import type { Config } from '../config/index.ts';
import { withCrossOrigin } from './cors.ts';
import { systemArea } from './system-routes.ts';

/** The service's own areas, by the first path segments they answer. */
export const SERVICE_AREAS: readonly ServiceAreaDeclaration[] = [systemArea, loginArea, spacesArea, auditArea];

/**
 * The service's own routes that answer with this configuration, as `/openapi.json` documents
 * them and `make routes` lists them: an area switched off (the spaces, while `spaces.enabled`
 * is false) answers 404 at every URL, so none of its routes is listed.
 */
export function answeringServiceRoutes(config: Config): readonly ListedRoute[] {
  return listAreas(SERVICE_AREAS.filter((area) => area.switchedOff?.(config) === undefined));
}

/** The first path segments of the areas switched off with this configuration, and why: `{ segments: ['spaces'], reason: 'spaces feature is disabled' }`. */
export function switchedOffAreas(config: Config): { readonly segments: readonly string[]; readonly reason: string }[] {
  return SERVICE_AREAS.flatMap((area) => {
    const reason = area.switchedOff?.(config);
    return reason === undefined ? [] : [{ segments: area.segments, reason }];
  });
}

function listAreas(areas: readonly ServiceAreaDeclaration[]): readonly ListedRoute[] {
  return areas.flatMap((area) => listRoutes(area.routes, area.traits, { mounts: [''] }));
}

/**
 * The area as the entry runs it: CORS if the area welcomes other origins, the tenant step if it
 * takes one, then its router (or the switched-off 404).
 */
export function serviceArea(declared: ServiceAreaDeclaration, parts: ServiceParts): Area {
  const { config } = parts.runtime;
  const offText = declared.switchedOff?.(config);
  const router = offText === undefined ? serviceRouter(declared, parts) : undefined;
  const answer = router === undefined ? switchedOff(offText ?? '') : router.area();
  const area = declared.traits.tenant ? withTenant(parts.runtime, answer) : answer;
  return declared.crossOrigin === true ? withCrossOrigin(config, (path) => router?.methodsOf(path) ?? [], area) : area;
}

function serviceRouter(declared: ServiceAreaDeclaration, parts: ServiceParts): Router {
  const settings = serviceChainSettings(declared.traits, parts);
  const router = new Router();
  for (const route of declared.routes) router.add(route.method, route.path, routeChain(route, settings), route.security);
  return router;
}

/** The service's own routes read JSON bodies (koa-body) and run their handlers as Koa middleware. */
function serviceChainSettings(traits: AreaTraits, parts: ServiceParts): ChainSettings<ServiceHandler> {
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

function switchedOff(text: string): (ctx: Context) => void {
  return () => {
    throw createError(404, text);
  };
}
