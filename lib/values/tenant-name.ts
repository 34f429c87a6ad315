/**
 * A tenant's name (SPEC §4.1): a letter or digit, then up to 62 letters, digits, `_` or `-`.
 * The tenant header, `tenancy.defaultTenant` and `make tenant`/`make user` check this one.
 */
export const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

export function isTenantName(value: string): boolean {
  return TENANT_NAME.test(value);
}
