/** SPEC §4.1; the tenant header, `tenancy.defaultTenant` and `make tenant`/`make user` check this one. */
export const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

export function isTenantName(value: string): boolean {
  return TENANT_NAME.test(value);
}
