import type { Context, Middleware } from 'koa';
import { findAccountByUid } from '../auth/accounts.ts';
import { unauthorized } from '../core/errors.ts';
import { requestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import type { HttpMethod } from '../routes/methods.ts';
import type { OperationDoc, ServiceHandler, ServiceRoute } from '../routes/service-area.ts';
import { spaceAccessOf, type SpaceAccess } from './access.ts';
import createError from 'http-errors';

declare module '../core/request-state.ts' {
  interface RequestState {
    /** What the caller may see of the spaces, as its account says now. */
    spaceAccess?: SpaceAccess;
  }
}

/** Read afresh each request: a changed role applies at once, a token of a removed account fails. */
export function loadCallerAccess(runtime: Runtime): Middleware {
  return async (ctx, next) => {
    const state = requestState(ctx);
    const { tenant, caller } = state;
    const account = tenant !== undefined && caller !== undefined ? await findAccountByUid(runtime.tenantDatabase, tenant, caller.uid) : undefined;
    if (account === undefined) throw unauthorized('account not found');
    state.spaceAccess = spaceAccessOf(account);
    await next();
  };
}

/** The caller's access, as `loadCallerAccess` found it earlier in the chain. */
export function callerAccess(ctx: Context): SpaceAccess {
  const access = requestState(ctx).spaceAccess;
  if (access === undefined) throw new Error('callerAccess: loadCallerAccess did not run');
  return access;
}

/** Writes are for admins (SPEC §6): 403 for anyone else, before the body is read. */
export const requireAdmin: Middleware = async (ctx, next) => {
  if (!callerAccess(ctx).admin) throw createError(403, 'admin role required');
  await next();
};

const loadCaller: ServiceHandler = ({ runtime }) => loadCallerAccess(runtime);
export const admin: ServiceHandler = () => requireAdmin;

/**
 * A route of the spaces and audit APIs: system authentication, the caller's account read (401
 * without one), then `guard` (`admin`: 403 for anyone else), all before the body is read.
 */
export function callerRoute(at: `${HttpMethod} /${string}`, guard: ServiceHandler | undefined, route: CallerRouteFields): ServiceRoute {
  const [method, path] = at.split(' ') as [HttpMethod, string];
  return { ...route, method, path, auth: 'system', guards: guard === undefined ? [loadCaller] : [loadCaller, guard] };
}

type CallerRouteFields = Omit<ServiceRoute, 'method' | 'path' | 'auth' | 'guards' | keyof OperationDoc> & OperationDoc;
