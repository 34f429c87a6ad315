import createError from 'http-errors';
import type { Context, Middleware } from 'koa';
import { findAccountByUid } from '../auth/accounts.ts';
import { requestState } from '../http/state.ts';
import type { Runtime } from '../runtime.ts';
import { spaceAccessOf, type SpaceAccess } from './access.ts';

const accessByRequest = new WeakMap<Context, SpaceAccess>();

/**
 * Reads the authenticated account afresh on every call, so a change to its role, spaces or
 * schemas applies at once; a token whose account is gone no longer authenticates.
 */
export function loadCallerAccess(runtime: Runtime): Middleware {
  return async (ctx, next) => {
    const { tenant, uid } = requestState(ctx);
    const account = tenant !== undefined && uid !== undefined ? await findAccountByUid(runtime.tenantDatabase, tenant, uid) : undefined;
    if (account === undefined) throw createError(401, 'account not found', { headers: { 'WWW-Authenticate': 'Bearer' } });
    accessByRequest.set(ctx, spaceAccessOf(account));
    await next();
  };
}

/** The caller's access, as `loadCallerAccess` found it earlier in the chain. */
export function callerAccess(ctx: Context): SpaceAccess {
  const access = accessByRequest.get(ctx);
  if (access === undefined) throw new Error('callerAccess: loadCallerAccess did not run');
  return access;
}

/** Writes are for admins (SPEC §6): 403 for anyone else, before the body is read. */
export const requireAdmin: Middleware = async (ctx, next) => {
  if (!callerAccess(ctx).admin) throw createError(403, 'admin role required');
  await next();
};
