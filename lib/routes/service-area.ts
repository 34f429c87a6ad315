import type { Context, Middleware } from 'koa';
import type { Config } from '../config/index.ts';
import type { Runtime } from '../core/runtime.ts';
import type { AreaTraits, RouteDeclaration } from './declaration.ts';
import { JsonSchemaCompiler } from './json-schema.ts';
import type { ListedRoute } from './route-table.ts';
import { readRouteSchema, type CompiledRouteSchema } from './schemas.ts';

/** What the handlers of the service's own routes are built from, once, at start-up. */
export interface ServiceParts {
  readonly runtime: Runtime;
  /** Every route the service answers, its own and the projects' (for `/openapi.json`). */
  readonly routes: () => readonly ListedRoute[];
}

/** A handler (or guard) of one of the service's own routes: a Koa middleware made from the service's parts. */
export type ServiceHandler = (parts: ServiceParts) => Middleware;

/** One of the service's own routes: `/healthz`, `/auth/login`, `/spaces/:name`... */
export type ServiceRoute = RouteDeclaration<ServiceHandler>;

/** One area of the service's own routes: the first path segments it answers, and how. */
export interface ServiceAreaDeclaration {
  readonly segments: readonly string[];
  readonly traits: AreaTraits;
  readonly routes: readonly ServiceRoute[];
  /** Browsers on other origins may call it, as the configuration's `cors` allows (the spaces). */
  readonly crossOrigin?: boolean;
  /** While this gives a text, every URL of the area answers 404 with it (after the tenant step). */
  readonly switchedOff?: (config: Config) => string | undefined;
}

/** The traits of an area of the service's own routes: JSON bodies, read only by routes declaring one. */
export function serviceTraits(options: { readonly tenant: boolean; readonly switchable?: boolean }): AreaTraits {
  return { kind: 'system', tenant: options.tenant, referer: false, everyRouteReadsBody: false, handlerErrors: [], switchable: options.switchable ?? false };
}

/** A schema the service declares for one of its own routes, compiled once; a mistake in it stops start-up. */
export function serviceSchema(declared: Record<string, unknown>): CompiledRouteSchema {
  const { problems, schema } = readRouteSchema(declared, new JsonSchemaCompiler(), undefined);
  if (schema === undefined) throw new Error(`a service route's schema: ${problems.join('; ')}`);
  return schema;
}

/** A service route's OpenAPI operation: id, summary and description, in one line of its area's table. */
export function operation(operationId: string, summary: string, description: string): OperationDoc {
  return { operationId, summary, description };
}

export interface OperationDoc {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
}

/** The request body of a route that declares a body schema: the chain checked it before the handler runs. */
export function checkedBody<Body>(ctx: Context): Body {
  return ctx.request.body as Body;
}
