import Router from '@koa/router';
import type { Middleware } from 'koa';
import { jsonBody } from '../http/json-body.ts';
import { routerMiddleware } from '../http/routing.ts';
import { rateLimit } from '../ratelimit/index.ts';
import type { Runtime } from '../runtime.ts';
import { loginHandler } from './login.ts';

/**
 * `POST /auth/login` (SPEC §5.2). The rate limit comes before the body is read, so every
 * attempt counts, malformed ones included.
 */
export function authRoutes(runtime: Runtime): Middleware {
  const router = new Router();
  router.post(
    '/auth/login',
    rateLimit(runtime, { name: 'login', ...runtime.config.rateLimit.login }),
    jsonBody(runtime.config.limits.jsonBytes),
    loginHandler(runtime),
  );
  return routerMiddleware(router);
}
