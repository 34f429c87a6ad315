export { auditArea } from './routes.ts';
export { readAudit, AUDIT_ACTIONS, type AuditEvent, type AuditPage, type AuditRequest, type AuditAction } from './events.ts';
