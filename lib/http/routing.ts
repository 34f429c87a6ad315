import type Router from '@koa/router';
import type { Middleware } from 'koa';

/**
 * A router's routes, plus 405 with `Allow` when the path is known but the method is not
 * (SPEC §7). Unknown paths pass on to the rest of the chain. The path is matched once here,
 * and the router entered only when one of its routes answers: most requests pass every
 * system router on their way to the projects.
 */
export function routerMiddleware(router: Router): Middleware {
  const routes = router.routes() as Middleware;
  return (ctx, next) => {
    const match = router.match(ctx.path, ctx.method);
    if (match.path.length === 0) return next();
    if (match.route) return routes(ctx, next);
    ctx.set('Allow', [...new Set(match.path.flatMap((layer) => layer.methods))].join(', '));
    ctx.status = 405;
    ctx.body = { error: 'Method Not Allowed' };
  };
}
