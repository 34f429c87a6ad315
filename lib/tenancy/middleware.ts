import createError from 'http-errors';
import type { Middleware } from 'koa';
import type { Runtime } from '../runtime.ts';
import { runInTenant } from './context.ts';
import { tenantFromHeader } from './name.ts';
import { requestState } from '../http/state.ts';

/**
 * Resolves the request's tenant, makes it visible as `req.headers.tenant`, and runs the rest
 * of the chain inside the tenant context that the data layer reads.
 */
export function resolveTenant(runtime: Runtime): Middleware {
  const defaultTenant = runtime.config.tenancy.defaultTenant;
  return async (ctx, next) => {
    const tenant = tenantFromHeader(ctx.request.headers.tenant, defaultTenant);
    if (!runtime.tenants.isKnown(tenant) && !(await runtime.tenants.exists(tenant))) throw createError(400, 'unknown tenant');
    ctx.request.headers.tenant = tenant;
    requestState(ctx).tenant = tenant;
    await runInTenant({ tenant, runtime }, next);
  };
}
