export { resolveTenant } from './middleware.ts';
export { runInTenant, currentTenantContext, type TenantContext } from './context.ts';
export { TenantDirectory, createTenant } from './directory.ts';
export { isTenantName, tenantFromHeader } from './name.ts';
export { requestScope, tenantRows, type TenantScope } from './scope.ts';
