import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { methodNotAllowed, nothingAnswers } from './errors.ts';

/**
 * The URLs of one area answered by a @koa/router router: an unknown path is 404, a known path
 * with another method 405 with `Allow` (SPEC §7).
 */
export function routerArea(router: Router): (ctx: Context) => Promise<void> {
  const routes = router.routes() as Middleware;
  return (ctx) => {
    const match = router.match(ctx.path, ctx.method);
    if (match.path.length === 0) throw nothingAnswers(ctx.method);
    if (!match.route) throw methodNotAllowed(match.path.flatMap((layer) => layer.methods));
    return routes(ctx, () => Promise.reject(nothingAnswers(ctx.method)));
  };
}
