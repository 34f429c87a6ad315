import type { Middleware } from 'koa';
import type { Runtime } from '../runtime.ts';

/** `POST /auth/login` (SPEC §5.2). Placeholder until the accounts issue lands. */
export function authRoutes(_runtime: Runtime): Middleware {
  return async (_ctx, next) => next();
}
