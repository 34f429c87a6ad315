import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { enterRoute } from '../bridge/index.ts';
import { requestState } from '../http/state.ts';
import { looseRoutePath, routeParams } from './params.ts';

/** `/api/<segment>` and the rest of the path; `/api` itself matches case-insensitively too. */
const MOUNT = /^(\/api\/([^/]+))(\/.*)?$/i;

interface RegisteredRoute {
  readonly chain: Middleware;
  /** Named in the log lines of the requests it answers. */
  readonly answeredBy: { readonly project: string; readonly route: string };
}

/** One project's routes: its own router, consulted only for URLs under its mount. */
export class ProjectRouter {
  readonly #project: string;
  readonly #router = new Router();
  readonly #routes = new Map<object, RegisteredRoute>();

  constructor(project: string) {
    this.#project = project;
  }

  /** Registers a route whose chain is already composed; GET also answers HEAD. */
  add(method: string, path: string, chain: Middleware): void {
    const layer = this.#router.register(looseRoutePath(path), [method], chain);
    this.#routes.set(layer, { chain, answeredBy: Object.freeze({ project: this.#project, route: `${method} ${path}` }) });
  }

  /**
   * Runs the matching routes in declaration order: a handler's `next()`, or `next('route')` from
   * anywhere in a route, reaches the next one; `next('router')` leaves them all.
   */
  dispatch(ctx: Context, next: Next, mount: string, rest: string): Promise<void> | void {
    const match = this.#router.match(rest, ctx.method);
    if (!match.route) return match.path.length === 0 ? next() : methodNotAllowed(ctx, match.path);
    const state = requestState(ctx);
    state.baseUrl = mount;
    const layers = match.pathAndMethod;
    const runLayer = (position: number): Promise<void> => {
      const layer = layers[position];
      if (layer === undefined) return next();
      const route = this.#routes.get(layer);
      if (route === undefined) throw new Error(`project route ${layer.path} has no registered chain`);
      const nextRoute = () => runLayer(position + 1);
      state.answeredBy = route.answeredBy;
      enterRoute(ctx, { params: routeParams(layer, rest), nextRoute, leaveRouter: next });
      return route.chain(ctx, nextRoute);
    };
    return runLayer(0);
  }
}

function methodNotAllowed(ctx: Context, layers: ReadonlyArray<{ methods: string[] }>): void {
  ctx.set('Allow', [...new Set(layers.flatMap((layer) => layer.methods))].join(', '));
  ctx.status = 405;
  ctx.body = { error: 'Method Not Allowed' };
}

/**
 * Picks the project by the URL's `/api/<segment>` with one map lookup (SPEC §8.2), so routing
 * costs the same with 500 projects as with one; other URLs pass on.
 */
export function projectDispatcher(routers: ReadonlyMap<string, ProjectRouter>): Middleware {
  return (ctx, next) => {
    const mount = MOUNT.exec(ctx.path);
    if (mount === null) return next();
    const router = routers.get(mount[2].toLowerCase());
    if (router === undefined) return next();
    return router.dispatch(ctx, next, mount[1], mount[3] ?? '/');
  };
}
