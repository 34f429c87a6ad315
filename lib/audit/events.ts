import type { Knex } from 'knex';
import type { AccountActor } from '../auth/account-events.ts';
import { requestIdSourceOf, type RequestIdSource } from '../core/request-state.ts';
import { sql, statementOf, type SqlFragment } from '../db/statement.ts';
import { tenantRows, type TenantScope } from '../tenancy/scope.ts';
import { EVENT_SCHEMA_NAMES, withinPageSize } from '../spaces/history.ts';

/** The actions `/audit` shows: the spaces' events (SPEC §6.6) and the accounts'. */
export const AUDIT_ACTIONS = ['space.created', 'space.updated', 'space.deleted', 'space.restored', 'space.purged', 'account.created', 'account.updated'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The actor value that names `make user`, besides any account whose uid or username it is. */
export const CLI_ACTOR = 'cli';

/** One event as `GET /audit` shows it; never a password or hash (space events record schemas, account events field names). */
export type AuditEvent = {
  readonly action: string;
  readonly at: string;
  readonly actor: AccountActor;
  readonly requestId: string;
  /** Who chose `requestId`: null outside a request and for events older than this record of it. */
  readonly requestIdFrom: RequestIdSource | null;
} & (
  | { readonly target: { readonly name: string }; readonly before: unknown; readonly after: unknown }
  | { readonly target: { readonly uid: string; readonly username: string }; readonly fields: readonly string[] }
);

export interface AuditRequest {
  readonly limit: number;
  /** Only events strictly older than this. */
  readonly before?: Date;
  readonly action?: AuditAction;
  /** A uid or username of the acting account, or `cli`. */
  readonly actor?: string;
}

export interface AuditPage {
  readonly events: AuditEvent[];
  /** Every event that matches the filters, whatever the page. */
  readonly total: number;
}

interface EventSource {
  readonly kind: 'space' | 'account';
  readonly table: string;
  readonly columns: readonly (string | Knex.Raw)[];
  readonly cli: boolean;
}

const SOURCES: readonly EventSource[] = [
  {
    kind: 'space',
    table: 'space_events',
    cli: false,
    columns: [
      sql.raw("'space' as kind"),
      'id',
      'at',
      sql.raw("'space.' || action as action"),
      'actor_uid',
      'actor_username',
      sql.raw('false as actor_cli'),
      'request_id',
      'request_id_from_caller',
      sql.raw('space as target_name'),
      sql.raw('null::text as target_uid'),
      'before',
      'after',
      sql.raw('null::text[] as fields'),
      sql.raw(`${EVENT_SCHEMA_NAMES} as schema_names`),
    ],
  },
  {
    kind: 'account',
    table: 'account_events',
    cli: true,
    columns: [
      sql.raw("'account' as kind"),
      'id',
      'at',
      sql.raw("'account.' || action as action"),
      'actor_uid',
      'actor_username',
      'actor_cli',
      'request_id',
      'request_id_from_caller',
      sql.raw('account_username as target_name'),
      sql.raw('account_uid as target_uid'),
      sql.raw('null::jsonb as before'),
      sql.raw('null::jsonb as after'),
      'fields',
      sql.raw('0 as schema_names'),
    ],
  },
];

const NEWEST_FIRST = [
  { column: 'at', order: 'desc' },
  { column: 'id', order: 'desc' },
];

interface EventRow {
  kind: 'space' | 'account';
  at: Date;
  action: string;
  actor_uid: string | null;
  actor_username: string | null;
  actor_cli: boolean;
  request_id: string;
  request_id_from_caller: boolean | null;
  target_name: string;
  target_uid: string | null;
  before: unknown;
  after: unknown;
  fields: string[] | null;
  /** How many rows the page was chosen from: more than it holds when `PAGE_SCHEMA_NAMES` cut it short. */
  candidates: string;
}

/**
 * `?before=<at>` cannot split events sharing a millisecond: a page ending inside such a group, at its limit or cut
 * short by its size (`PAGE_SCHEMA_NAMES`), takes it whole, so paging never skips nor repeats.
 */
export async function readAudit(scope: TenantScope, request: AuditRequest): Promise<AuditPage> {
  const older = request.before === undefined ? [] : [{ sql: 'at < ?', bindings: [request.before.toISOString()] }];
  const page = await eventRows(scope, request, older, request.limit);
  const last = page.at(-1);
  const cutShort = last !== undefined && page.length < Number(last.candidates);
  if ((page.length < request.limit && !cutShort) || last === undefined) return { events: page.map(eventOfRow), total: await countEvents(scope, request) };
  const group = await eventRows(scope, request, [{ sql: 'at = ?', bindings: [last.at.toISOString()] }], undefined);
  const events = [...page.filter((row) => row.at.getTime() !== last.at.getTime()), ...group];
  return { events: events.map(eventOfRow), total: await countEvents(scope, request) };
}

/** One order for both kinds: their ids are counted apart, so the kind decides between equal ones. */
const ORDER = 'at desc, kind desc, id desc';

async function eventRows(scope: TenantScope, request: AuditRequest, conditions: SqlFragment[], limit: number | undefined): Promise<EventRow[]> {
  const branches = sourcesOf(request).map((source) => {
    const rows = tenantRows(source.table, scope.tenant, ...filtersOf(source, request), ...conditions).select(...source.columns);
    return limit === undefined ? rows : rows.orderBy([...NEWEST_FIRST]).limit(limit);
  });
  const union = sql.raw(`(${branches.map(() => '?').join(' union all ')}) as events`, branches);
  const query = sql.select('*').from(union).orderByRaw(ORDER);
  // A group sharing one millisecond is taken whole (see readAudit); a page stops at its size.
  const chosen = limit === undefined ? query : withinPageSize(query.limit(limit), 'schema_names', ORDER);
  const { rows } = await scope.database.query<EventRow>(scope.tenant, statementOf(chosen));
  return rows;
}

async function countEvents(scope: TenantScope, request: AuditRequest): Promise<number> {
  let total = 0;
  for (const source of sourcesOf(request)) {
    const counting = tenantRows(source.table, scope.tenant, ...filtersOf(source, request)).count({ n: '*' });
    const { rows } = await scope.database.query<{ n: string }>(scope.tenant, statementOf(counting));
    total += Number(rows[0]?.n ?? 0);
  }
  return total;
}

function sourcesOf(request: AuditRequest): readonly EventSource[] {
  return request.action === undefined ? SOURCES : SOURCES.filter((source) => request.action?.startsWith(`${source.kind}.`));
}

function filtersOf(source: EventSource, request: AuditRequest): SqlFragment[] {
  const filters: SqlFragment[] = [];
  if (request.action !== undefined) filters.push({ sql: 'action = ?', bindings: [request.action.slice(source.kind.length + 1)] });
  if (request.actor !== undefined) {
    const byCli = source.cli && request.actor === CLI_ACTOR ? ' or actor_cli' : '';
    filters.push({ sql: `actor_uid = ? or actor_username = ?${byCli}`, bindings: [request.actor, request.actor] });
  }
  return filters;
}

function eventOfRow(row: EventRow): AuditEvent {
  const common = { action: row.action, at: row.at.toISOString(), actor: actorOfRow(row), requestId: row.request_id, requestIdFrom: requestIdSourceOf(row.request_id_from_caller) };
  if (row.kind === 'space') return { ...common, target: { name: row.target_name }, before: row.before, after: row.after };
  return { ...common, target: { uid: row.target_uid ?? '', username: row.target_name }, fields: row.fields ?? [] };
}

function actorOfRow(row: EventRow): AccountActor {
  if (row.actor_cli) return { cli: true };
  return row.actor_uid === null ? null : { uid: row.actor_uid, username: row.actor_username };
}
