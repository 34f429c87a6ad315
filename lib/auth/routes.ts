import Router from '@koa/router';
import type { Context } from 'koa';
import { jsonBody } from '../core/json-body.ts';
import { routerArea } from '../core/routing.ts';
import type { Runtime } from '../core/runtime.ts';
import { rateLimit } from '../ratelimit/index.ts';
import { loginHandler } from './login.ts';

/**
 * `POST /auth/login` (SPEC §5.2). The rate limit comes before the body is read, so every
 * attempt counts, malformed ones included.
 */
export function loginArea(runtime: Runtime): (ctx: Context) => Promise<void> {
  const router = new Router();
  router.post(
    '/auth/login',
    rateLimit(runtime, { name: 'login', ...runtime.config.rateLimit.login }),
    jsonBody(runtime.config.limits.jsonBytes),
    loginHandler(runtime),
  );
  return routerArea(router);
}
