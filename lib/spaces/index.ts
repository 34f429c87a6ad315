import type { Middleware } from 'koa';
import type { Runtime } from '../runtime.ts';

/** The `/spaces` API (SPEC §6). Placeholder until the spaces issue lands. */
export function spacesRoutes(_runtime: Runtime): Middleware {
  return async (_ctx, next) => next();
}
