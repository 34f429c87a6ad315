import type { Context } from 'koa';
import { operation, serviceSchema, serviceTraits, type ServiceAreaDeclaration } from '../routes/service-area.ts';
import { admin, callerRoute } from '../spaces/caller.ts';
import { requestScope } from '../tenancy/scope.ts';
import { readAudit } from './events.ts';
import { auditQuery, auditAnswer, auditRequestOf } from './query.ts';

/** Answers whatever the spaces switch: the record outlives it. Authentication and the admin check are the spaces API's own, so both answer alike. */
export const auditArea: ServiceAreaDeclaration = {
  segments: ['audit'],
  traits: serviceTraits({ tenant: true }),
  crossOrigin: true,
  routes: [
    callerRoute('GET /audit', admin, {
      handler: () => showAudit,
      schema: serviceSchema({ query: auditQuery, responses: { 200: auditAnswer } }),
      ...operation('getAudit', "The tenant's space and account events, newest first (admin)", '`?limit` (1-1000, default 100) and `?before=<at>` page through it; events sharing the last `at` of a page are never split between pages, so a page may hold a few more than `limit`; a page also stops before the event that would take its schema lists past 20 000 names (one event at least), so it may hold fewer while `total` says more are left. `?action=` and `?actor=` filter. Answers also while the spaces feature is off.'),
      tags: ['audit'],
      errors: [403],
    }),
  ],
};

async function showAudit(ctx: Context): Promise<void> {
  const page = await readAudit(requestScope('the audit'), auditRequestOf(ctx.query));
  ctx.body = { success: true, data: page.events, total: page.total };
}
