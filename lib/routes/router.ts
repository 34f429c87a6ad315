import KoaRouter, { type Layer } from '@koa/router';
import createError from 'http-errors';
import type { Context, Middleware } from 'koa';
import { methodNotAllowed, nothingAnswers } from '../core/errors.ts';
import { requestState, type ExpressRoute, type RouteMatch } from '../core/request-state.ts';
import { credentialQueryNames, type RouteDeclaration } from './declaration.ts';

/** What the router keeps of a route: its composed chain, and what a match of it tells the request. */
type RegisteredRoute = Pick<RouteMatch, 'project' | 'name' | 'route' | 'credentialQuery'> & { readonly chain: Middleware };

/** One area's routes, matched as Express matches them; @koa/router only matches, its dispatch unused. */
export class Router {
  readonly #project: string | undefined;
  readonly #router = new KoaRouter();
  readonly #routes = new Map<object, RegisteredRoute>();

  /** `project`: the project whose routes these are, named in log lines; none for the service's own. */
  constructor(project?: string) {
    this.#project = project;
  }

  /** Registers a route whose chain is already composed; GET also answers HEAD. `security`: what it declares its credential is. */
  add(method: string, path: string, chain: Middleware, security?: RouteDeclaration<unknown>['security']): void {
    const layer = this.#router.register(looseRoutePath(path), [method], chain);
    const credentialQuery = credentialQueryNames(security);
    this.#routes.set(layer, { chain, project: this.#project, name: `${method} ${path}`, route: expressRoute(method, path), credentialQuery });
  }

  /**
   * Runs the routes matching `rest` in order: a handler's `next()` or `next('route')` reaches the
   * next one; `next('router')` leaves them all. `baseUrl` is the mount (`/api/sample`).
   */
  dispatch(ctx: Context, baseUrl: string, rest: string): Promise<void> {
    const match = this.#router.match(rest, ctx.method);
    if (!match.route) throw match.path.length === 0 ? nothingAnswers(ctx.method) : methodNotAllowed(match.path.flatMap((layer) => layer.methods));
    const state = requestState(ctx);
    const layers = match.pathAndMethod;
    const leaveRouter = () => Promise.resolve();
    const runLayer = (position: number): Promise<void> => {
      const layer = layers[position];
      if (layer === undefined) return leaveRouter();
      const registered = this.#routes.get(layer);
      if (registered === undefined) throw new Error(`route ${layer.path} has no registered chain`);
      const nextRoute = () => runLayer(position + 1);
      const { project, name, route, chain, credentialQuery } = registered;
      state.route = { project, name, route, baseUrl, params: routeParams(layer, rest), nextRoute, leaveRouter, credentialQuery };
      return chain(ctx, nextRoute);
    };
    return runLayer(0);
  }

  /** The methods of the routes matching `path` (GET brings HEAD); none for an unknown path. */
  methodsOf(path: string): readonly string[] {
    return [...new Set(this.#router.match(path, 'OPTIONS').path.flatMap((layer) => layer.methods))];
  }

  /** The router as an area of the entry: it answers the whole path. */
  area(): (ctx: Context) => Promise<void> {
    return (ctx) => this.dispatch(ctx, '', ctx.path);
  }
}

function expressRoute(method: string, path: string): ExpressRoute {
  return Object.freeze({ path, methods: Object.freeze({ [method.toLowerCase()]: true as const }) });
}

/** How the router reads a declared path: what it matches, and its parameters' names. */
export interface PathPattern {
  readonly regexp: RegExp;
  readonly parameters: readonly string[];
}

/** Each declared path compiled once, however often it is checked, or the router's error for it: route files are read at start-up only. */
const patterns = new Map<string, PathPattern | Error>();

/** Throws the router's own message for a path it cannot compile (`/items/:`). */
export function pathPattern(path: string): PathPattern {
  let pattern = patterns.get(path);
  if (pattern === undefined) {
    pattern = compiledPattern(path);
    patterns.set(path, pattern);
  }
  if (pattern instanceof Error) throw pattern;
  return pattern;
}

function compiledPattern(path: string): PathPattern | Error {
  const router = new KoaRouter();
  try {
    router.register(looseRoutePath(path), ['GET'], () => {});
  } catch (error) {
    return error as Error;
  }
  const [layer] = router.stack;
  return Object.freeze({ regexp: layer.regexp, parameters: Object.freeze(layer.paramNames.map((key) => String(key.name))) });
}

/** Express drops a declared path's trailing slashes (`/items/` answers `/items`); @koa/router would insist. */
function looseRoutePath(path: string): string {
  return path.replace(/\/+$/, '') || '/';
}

/**
 * `req.params` as Express 5 gives them: no prototype, values decoded, a wildcard (`*rest`) the
 * array of its segments, an absent optional part left out. A value that does not decode is 400.
 */
export function routeParams(layer: Layer, path: string): Record<string, string | string[]> {
  const captures = layer.captures(path);
  const params: Record<string, string | string[]> = Object.create(null);
  layer.paramNames.forEach((key, index) => {
    const value = captures[index];
    if (value === undefined) return;
    params[key.name] = key.type === 'wildcard' ? value.split('/').map(decodeParam) : decodeParam(value);
  });
  return params;
}

/** The params of the route answering the request, as the router decoded them. */
export function paramsOf(ctx: Context): Readonly<Record<string, string | string[]>> {
  return requestState(ctx).route?.params ?? {};
}

function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw createError(400, `Failed to decode param '${value}'`);
  }
}
