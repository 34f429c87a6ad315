import createError from 'http-errors';

const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

export function isTenantName(value: string): boolean {
  return TENANT_PATTERN.test(value);
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
