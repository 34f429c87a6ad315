import type { Context } from 'koa';

/** `req.route`: the route as declared, one frozen object per route, shared by its requests. */
export interface ExpressRoute {
  readonly path: string;
  /** The declared method in lower case, as Express's `Route#methods` (`{ get: true }`). */
  readonly methods: Readonly<Record<string, true>>;
}

/** The `req.route` of a route declared with `method` and `path`. */
export function expressRoute(method: string, path: string): ExpressRoute {
  return Object.freeze({ path, methods: Object.freeze({ [method.toLowerCase()]: true as const }) });
}

/** What the router that picked a route tells the bridge, as Express's router keeps it on `req`. */
export interface RouteMatch {
  /** `req.route`. */
  readonly route: ExpressRoute;
  /** `req.params`, decoded the way Express's router decodes them; one object for the whole route. */
  readonly params: Record<string, string | string[]>;
  /** Where `next('route')` leads: the next route matching the URL, skipping the rest of this one. */
  readonly nextRoute: () => Promise<void>;
  /** Where `next('router')` leads: past every route of the router. */
  readonly leaveRouter: () => Promise<void>;
}

const matches = new WeakMap<Context, RouteMatch>();

/** Called by the router each time it hands the request to a route. */
export function enterRoute(context: Context, match: RouteMatch): void {
  matches.set(context, match);
}

export function routeMatch(context: Context): RouteMatch | undefined {
  return matches.get(context);
}
