import type Router from '@koa/router';
import type { Middleware } from 'koa';

/**
 * A router's routes, plus 405 with `Allow` when the path is known but the method is not
 * (SPEC §7). Unknown paths pass on to the rest of the chain.
 */
export function routerMiddleware(router: Router): Middleware {
  const routes = router.routes() as Middleware;
  return (ctx, next) =>
    routes(ctx, async () => {
      const match = router.match(ctx.path, ctx.method);
      if (match.path.length === 0 || match.route) return next();
      ctx.set('Allow', [...new Set(match.path.flatMap((layer) => layer.methods))].join(', '));
      ctx.status = 405;
      ctx.body = { error: 'Method Not Allowed' };
    });
}
