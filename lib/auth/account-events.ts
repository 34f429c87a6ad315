import { idChosenByCaller, type RequestState } from '../core/request-state.ts';
import { eventTimeAfter, latestEventTime } from '../db/event-time.ts';
import { sql, statementOf } from '../db/statement.ts';
import type { TransactionStatement } from '../db/tenant-database.ts';
import { tenantRows } from '../tenancy/scope.ts';

/** Who changed an account: an account (from its token), `make user`, or null (a tool or test outside a request). */
export type AccountActor = { readonly uid: string; readonly username: string | null } | { readonly cli: true } | null;

/** The account an event is about, as it was named when the event was written. */
export interface AccountTarget {
  readonly uid: string;
  readonly username: string;
}

export type AccountAction = 'created' | 'updated';

/** Who makes a change, and the request it is made in (none: a tool or test acting outside one). */
export interface ChangeOrigin {
  readonly actor: AccountActor;
  readonly request: RequestState | undefined;
}

const TABLE = 'account_events';

/** The caller of `request`, when there is one; null outside a request. */
export function requestActor(request: RequestState | undefined): AccountActor {
  const caller = request?.caller;
  if (caller === undefined) return null;
  const username = caller.claims.username;
  return { uid: caller.uid, username: typeof username === 'string' ? username : null };
}

/**
 * One account event, in the change's transaction. `fields` are names, never values: no password
 * or hash can reach an event. The change holds the account's row lock: its events are ordered.
 */
export async function insertAccountEvent(
  run: TransactionStatement,
  tenant: string,
  target: AccountTarget,
  action: AccountAction,
  fields: readonly string[],
  { actor, request }: ChangeOrigin,
): Promise<void> {
  const latest = await latestEventTime(run, tenantRows(TABLE, tenant, { sql: 'account_uid = ?', bindings: [target.uid] }));
  const byAccount = actor !== null && 'uid' in actor ? actor : undefined;
  const inserting = sql(TABLE).insert({
    tenant,
    account_uid: target.uid,
    account_username: target.username,
    action,
    at: eventTimeAfter(latest),
    actor_uid: byAccount?.uid ?? null,
    actor_username: byAccount?.username ?? null,
    actor_cli: actor !== null && 'cli' in actor,
    request_id: request?.requestId ?? '',
    request_id_from_caller: idChosenByCaller(request),
    fields: [...fields].sort(),
  });
  await run(statementOf(inserting));
}
