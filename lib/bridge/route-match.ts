import type { Context } from 'koa';

/** What the router that picked a route tells the bridge, as Express's router keeps it on `req`. */
export interface RouteMatch {
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
