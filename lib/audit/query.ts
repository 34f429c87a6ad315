import { z } from 'zod';
import { givenOnceOr, historyPageOf, historyQuery, queryOf, requestIdSource } from '../spaces/validation.ts';
import { isStorableText } from '../values/storable-text.ts';
import { AUDIT_ACTIONS, CLI_ACTOR, type AuditAction, type AuditRequest } from './events.ts';

/** The page as `GET /spaces/:name/history` takes it, and two filters; any other parameter is a 400: a misspelt filter must not answer everything. */
export const auditQuery = queryOf({
    ...historyQuery.shape,
    action: z
      .enum(AUDIT_ACTIONS, { error: givenOnceOr(`must be one of ${AUDIT_ACTIONS.join(', ')}`) })
      .optional()
      .meta({ description: 'Only events of this action.' }),
    actor: z
      .string({ error: 'must be given once' })
      .min(1, 'must not be empty')
      // PostgreSQL text cannot hold them: refused here rather than failing as a 500.
      .refine(isStorableText, 'must not contain NUL or unpaired surrogates')
      .optional()
      .meta({ description: `Only events made by the account with this uid or username (as it was when it acted); \`${CLI_ACTOR}\` also matches changes made by \`make user\`.` }),
}).meta({ title: 'AuditQuery' });

export function auditRequestOf(query: Record<string, unknown>): AuditRequest {
  const page = historyPageOf(query);
  return {
    ...page,
    ...(typeof query.action === 'string' ? { action: query.action as AuditAction } : {}),
    ...(typeof query.actor === 'string' ? { actor: query.actor } : {}),
  };
}

const accountActor = z.object({ uid: z.string(), username: z.string().nullable() });
const recordedSchemas = z.object({ schemas: z.array(z.string()) }).nullable();

const common = {
  at: z.iso.datetime(),
  actor: z
    .union([accountActor, z.object({ cli: z.literal(true) })])
    .nullable()
    .meta({ description: 'The account that made the change, `{cli: true}` for `make user`, or null when neither is known.' }),
  requestId: z.string().meta({ description: 'The `X-Request-Id` of the request that made it; empty outside a request.' }),
  requestIdFrom: requestIdSource,
};

const spaceEvent = z.object({
  action: z.enum(AUDIT_ACTIONS.filter((action) => action.startsWith('space.'))),
  ...common,
  target: z.object({ name: z.string() }).meta({ description: 'The space.' }),
  before: recordedSchemas,
  after: recordedSchemas,
});

const accountEvent = z.object({
  action: z.enum(AUDIT_ACTIONS.filter((action) => action.startsWith('account.'))),
  ...common,
  target: z.object({ uid: z.string(), username: z.string() }).meta({ description: 'The account, named as it was then.' }),
  fields: z.array(z.string()).meta({ description: 'The names of the fields set (created) or changed (updated); never their values. `password` is listed whenever one was set.' }),
});

/** The answer of `GET /audit`: a page of events, newest first, and the count of all that match. */
export const auditAnswer = z
  .object({ success: z.literal(true), data: z.array(z.union([spaceEvent, accountEvent])), total: z.int().min(0) })
  .meta({ title: 'AuditEvents' });
