import type { Knex } from 'knex';
import { idChosenByCaller, requestIdSourceOf, type RequestIdSource } from '../core/request-state.ts';
import { eventTimeAfter, latestEventTime } from '../db/event-time.ts';
import { sql, statementOf, type SqlFragment } from '../db/statement.ts';
import type { TransactionStatement } from '../db/tenant-database.ts';
import { tenantRows, type TenantScope } from '../tenancy/scope.ts';
import type { ChangeScope } from './rows.ts';

/** What happened to a space (SPEC §6.6). */
export type SpaceAction = 'created' | 'updated' | 'deleted' | 'restored' | 'purged';

/** One change of a space as `GET /spaces/:name/history` shows it; never a password or hash (only schemas are recorded). */
export interface SpaceEvent {
  readonly action: string;
  readonly at: string;
  readonly actor: { readonly uid: string; readonly username: string | null } | null;
  readonly requestId: string;
  /** Who chose `requestId`: null outside a request (a purge by the timer) and for events older than this record of it. */
  readonly requestIdFrom: RequestIdSource | null;
  readonly before: { readonly schemas: readonly string[] } | null;
  readonly after: { readonly schemas: readonly string[] } | null;
}

export interface HistoryPage {
  readonly events: SpaceEvent[];
  /** Every event of the name, whatever the page. */
  readonly total: number;
}

export interface PageRequest {
  readonly limit: number;
  /** Only events strictly older than this. */
  readonly before?: Date;
}

interface EventRow {
  action: string;
  at: Date;
  actor_uid: string | null;
  actor_username: string | null;
  request_id: string;
  request_id_from_caller: boolean | null;
  before: { schemas: string[] } | null;
  after: { schemas: string[] } | null;
}

const TABLE = 'space_events';

/**
 * One event, in the change's transaction. The change holds the space's row lock, so its events
 * are strictly ordered by `at` (milliseconds), and paging by `at` never skips one.
 */
export async function insertEvent(
  run: TransactionStatement,
  { tenant, request }: ChangeScope,
  space: string,
  action: SpaceAction,
  before: readonly string[] | undefined,
  after: readonly string[] | undefined,
): Promise<void> {
  const caller = request?.caller;
  const username = caller?.claims.username;
  const latest = await latestEventTime(run, tenantRows(TABLE, tenant, namedSpace(space)));
  const inserting = sql(TABLE).insert({
    tenant,
    space,
    action,
    at: eventTimeAfter(latest),
    actor_uid: caller?.uid ?? null,
    actor_username: typeof username === 'string' ? username : null,
    request_id: request?.requestId ?? '',
    request_id_from_caller: idChosenByCaller(request),
    before: before === undefined ? null : JSON.stringify({ schemas: before }),
    after: after === undefined ? null : JSON.stringify({ schemas: after }),
  });
  await run(statementOf(inserting));
}

/**
 * The schema names one page of events may hold, before and after together. A space may hold 1 000 names of 128
 * characters, which each of its events holds twice: a page of 1 000 of them was a 260 MB answer, built whole in the
 * service's memory. A page stops before the event that would take it past this, holding one event at least, and the
 * caller pages on with `before`.
 */
export const PAGE_SCHEMA_NAMES = 20_000;

/** The schema names an event row holds, as SQL. */
export const EVENT_SCHEMA_NAMES = "coalesce(jsonb_array_length(before->'schemas'), 0) + coalesce(jsonb_array_length(after->'schemas'), 0)";

/**
 * `rows` (ordered by `order`) with `names_before`, the schema names of the rows before each, and `candidates`, how
 * many rows there were, keeping those that start within `PAGE_SCHEMA_NAMES`. Counted by PostgreSQL, so that the
 * events left out are never sent.
 */
export function withinPageSize(rows: Knex.QueryBuilder | Knex.Raw, names: string, order: string): Knex.QueryBuilder {
  const counted = sql.raw(`(select *, sum(${names}) over (order by ${order}) - (${names}) as names_before, count(*) over () as candidates from (?) as rows) as page`, [rows]);
  return sql.select('*').from(counted).where('names_before', '<', PAGE_SCHEMA_NAMES).orderByRaw(order);
}

/** The events of `space`, newest first; undefined when the name never had an event nor a live space. */
export async function readHistory(scope: TenantScope, space: string, page: PageRequest): Promise<HistoryPage | undefined> {
  const total = await countEvents(scope, space);
  if (total === 0 && !(await spaceExists(scope, space))) return undefined;
  const conditions = [namedSpace(space), ...(page.before === undefined ? [] : [{ sql: 'at < ?', bindings: [page.before.toISOString()] }])];
  const rows = tenantRows(TABLE, scope.tenant, ...conditions)
    .select('id', 'action', 'at', 'actor_uid', 'actor_username', 'request_id', 'request_id_from_caller', 'before', 'after')
    .orderBy([
      { column: 'at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(page.limit);
  const { rows: found } = await scope.database.query<EventRow>(scope.tenant, statementOf(withinPageSize(rows, EVENT_SCHEMA_NAMES, 'at desc, id desc')));
  return { events: found.map(eventOfRow), total };
}

async function countEvents(scope: TenantScope, space: string): Promise<number> {
  const counting = tenantRows(TABLE, scope.tenant, namedSpace(space)).count({ n: '*' });
  const { rows } = await scope.database.query<{ n: string }>(scope.tenant, statementOf(counting));
  return Number(rows[0]?.n ?? 0);
}

/** A space made before history was kept has no event yet: its history is empty, not absent. */
async function spaceExists(scope: TenantScope, space: string): Promise<boolean> {
  const { rows } = await scope.database.query(scope.tenant, statementOf(tenantRows('spaces', scope.tenant, { sql: 'name = ?', bindings: [space] }).select('name').limit(1)));
  return rows.length > 0;
}

function namedSpace(space: string): SqlFragment {
  return { sql: 'space = ?', bindings: [space] };
}

function eventOfRow(row: EventRow): SpaceEvent {
  return {
    action: row.action,
    at: row.at.toISOString(),
    actor: row.actor_uid === null ? null : { uid: row.actor_uid, username: row.actor_username },
    requestId: row.request_id,
    requestIdFrom: requestIdSourceOf(row.request_id_from_caller),
    before: row.before,
    after: row.after,
  };
}
