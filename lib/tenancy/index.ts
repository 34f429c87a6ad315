export { withTenant, type TenantScoped } from './step.ts';
export { TenantDirectory, createTenant } from './directory.ts';
export { isTenantName, tenantFromHeader } from './step.ts';
export { requestScope, runInTenant, tenantRows, type TenantScope } from './scope.ts';
