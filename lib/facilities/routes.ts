import type { RouteHandler } from '../bridge/index.ts';

export type { BridgeRequest as Request, BridgeResponse as Response, NextFunction, RouteHandler, UploadedFile } from '../bridge/index.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One entry of a project's `api/routes.js` default export (seed §2.4, SPEC §8.1). */
export interface Route {
  /** GET, POST, PUT or DELETE, in any case. A GET route also answers HEAD. */
  method: Method | Lowercase<Method>;
  /** Starts with `/`; `:name` is a parameter (`req.params.name`). Matched case-insensitively. */
  path: `/${string}`;
  function: RouteHandler;
  /** `true` makes the route public (no system JWT), rate-limited by `rateLimit.public`. */
  skipAuth?: boolean;
  /** Custom authentication: answers the request itself or calls `next()`. Replaces the system JWT. */
  auth?: RouteHandler;
}

/** Returns `routes` unchanged: it only gives a route file its types. */
export function defineRoutes<const Routes extends readonly Route[]>(routes: Routes): Routes {
  return routes;
}
