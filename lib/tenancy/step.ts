import createError from 'http-errors';
import type { Context } from 'koa';
import type { Area } from '../core/area.ts';
import { requestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import { isTenantName } from '../values/tenant-name.ts';

/** The tenant step (SPEC §4.1): sets `req.headers.tenant` and the request state every data access reads (§4.2); a known tenant costs no promise. */
export function withTenant(runtime: Runtime, rest: Area): Area {
  const defaultTenant = runtime.config.tenancy.defaultTenant;
  const enter = (ctx: Context, tenant: string) => {
    ctx.request.headers.tenant = tenant;
    requestState(ctx).tenant = tenant;
    return rest(ctx);
  };
  return (ctx) => {
    const tenant = tenantFromHeader(ctx.request.headers.tenant, defaultTenant);
    if (runtime.tenants.isKnown(tenant)) return enter(ctx, tenant);
    return runtime.tenants.exists(tenant).then((exists) => {
      if (!exists) throw createError(400, 'unknown tenant');
      return enter(ctx, tenant);
    });
  };
}

/** The tenant a request names: its `tenant` header, else the configured default (SPEC §4.1). */
export function tenantFromHeader(header: string | string[] | undefined, defaultTenant: string | null): string {
  if (Array.isArray(header)) throw createError(400, 'invalid tenant header');
  if (header === undefined) {
    if (defaultTenant === null) throw createError(400, 'tenant header is required');
    return defaultTenant;
  }
  if (!isTenantName(header)) throw createError(400, 'invalid tenant header');
  return header;
}
