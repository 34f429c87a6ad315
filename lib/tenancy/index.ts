export { tenantFromHeader, withTenant } from './step.ts';
export { TenantDirectory, createTenant } from './directory.ts';
export { requestScope, runInTenant, tenantRows, type TenantScope } from './scope.ts';
