import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { AUDIT_ACTIONS, readAudit, type AuditEvent, type AuditRequest } from '../../lib/audit/events.ts';
import type { AccountActor } from '../../lib/auth/account-events.ts';
import { saveAccount } from '../../lib/auth/accounts.ts';
import type { Runtime } from '../../lib/core/runtime.ts';
import { insertSpace, replaceSpaceSchemas } from '../../lib/spaces/store.ts';
import { requestScope, runInTenant } from '../../lib/tenancy/index.ts';
import type { MigratedDatabase, TenantDatabaseRoute } from './database.ts';
import { compareAnswers, spaceWorlds, type SpaceWorlds } from './space-isolation.ts';

/**
 * The isolation property for `/audit` and `account_events`, as a differential test over the
 * three worlds of the spaces property: alpha and beta change the same account and space names
 * at the same moment in `shared`, and alone in their own worlds; each must read the same record
 * in both. Events of one millisecond may be ordered differently from world to world, so a read
 * is compared as the page's size, the total, and the whole record as a multiset; a page must
 * come from its own world's record.
 */
export type AuditWorlds = SpaceWorlds;

export function auditWorlds(route?: TenantDatabaseRoute): Promise<AuditWorlds> {
  return spaceWorlds(route);
}

/** Accounts made before each case (directly, so no password is hashed): saves then update them. */
const USERNAMES = ['ann', 'bob', 'cy'];
const SPACES = ['ops', 'Ops', 'sales'];
const ACTORS: AccountActor[] = [null, { cli: true }, { uid: 'u-boss', username: 'boss' }];
const FAR_PAST = new Date('2001-01-01T00:00:00.000Z');
const FAR_FUTURE = new Date('2999-01-01T00:00:00.000Z');

type AuditCommand =
  | { kind: 'save'; username: string; role: 'admin' | 'member'; spaces: string[]; actor: AccountActor }
  | { kind: 'space'; name: string; schemas: string[] }
  | { kind: 'read'; request: AuditRequest };

const names = fc.uniqueArray(fc.constantFrom('s1', 's2', 'x'), { maxLength: 2 });
const request: fc.Arbitrary<AuditRequest> = fc.record(
  {
    limit: fc.integer({ min: 1, max: 5 }),
    before: fc.constantFrom(FAR_PAST, FAR_FUTURE),
    action: fc.constantFrom(...AUDIT_ACTIONS),
    actor: fc.constantFrom('cli', 'boss', 'u-boss', 'ann', 'nobody'),
  },
  { requiredKeys: ['limit'] },
);

const command: fc.Arbitrary<AuditCommand> = fc.oneof(
  fc
    .record({ username: fc.constantFrom(...USERNAMES), role: fc.constantFrom('admin' as const, 'member' as const), spaces: names, actor: fc.constantFrom(...ACTORS) })
    .map((given) => ({ kind: 'save', ...given }) as const),
  fc.record({ name: fc.constantFrom(...SPACES), schemas: names }).map((given) => ({ kind: 'space', ...given }) as const),
  request.map((given) => ({ kind: 'read', request: given }) as const),
);

/** Steps of the case: in each, alpha and beta run one command each, at once. */
export const auditCase = fc.array(fc.record({ alpha: command, beta: command }), { minLength: 1, maxLength: 8 });
export type AuditCase = Array<{ alpha: AuditCommand; beta: AuditCommand }>;

/** Runs every step in every world and throws at the first difference. */
export async function checkAuditIsolation(worlds: AuditWorlds, steps: AuditCase): Promise<void> {
  const all = [
    { world: worlds.shared, tenants: ['alpha', 'beta'] },
    { world: worlds.alphaAlone, tenants: ['alpha'] },
    { world: worlds.betaAlone, tenants: ['beta'] },
  ];
  await Promise.all(all.map(({ world, tenants }) => reset(world, tenants)));
  await compareAnswers(worlds, steps, run);
  for (const tenant of ['alpha', 'beta']) {
    const alone = tenant === 'alpha' ? worlds.alphaAlone : worlds.betaAlone;
    const [inShared, inAlone] = await Promise.all([storedEvents(worlds.shared, tenant), storedEvents(alone, tenant)]);
    if (!isDeepStrictEqual(inShared, inAlone)) throw new Error(`${tenant}'s account events differ beside the other tenant`);
  }
}

async function reset(world: MigratedDatabase, tenants: string[]): Promise<void> {
  await Promise.all([world.knex('spaces').delete(), world.knex('space_events').delete(), world.knex('account_events').delete(), world.knex('documents').delete()]);
  // The same ids and names in both tenants: only the tenant tells them apart.
  const accounts = tenants.flatMap((tenant) => USERNAMES.map((username) => ({ tenant, collection: 'accounts', id: `id-${username}`, doc: { _id: `id-${username}`, username, role: 'member', password: 'not-a-real-hash' } })));
  await world.knex('documents').insert(accounts);
}

function run(world: MigratedDatabase, tenant: string, given: AuditCommand): Promise<unknown> {
  const runtime = { tenantDatabase: world.tenantDatabase } as Runtime;
  return runInTenant(runtime, tenant, async () => {
    switch (given.kind) {
      case 'save': {
        const { account } = await saveAccount(world.tenantDatabase, tenant, { username: given.username, role: given.role, spaces: given.spaces }, { actor: given.actor });
        return account;
      }
      case 'space': {
        const stored = (await insertSpace({ name: given.name, schemas: given.schemas })) ?? (await replaceSpaceSchemas(given.name, given.schemas));
        return stored?.space.schemas;
      }
      case 'read':
        return readShape(given.request);
    }
  });
}

/** What a read shows, comparable across worlds (see `AuditWorlds`). */
async function readShape(given: AuditRequest): Promise<unknown> {
  const scope = requestScope('the audit isolation property');
  const [page, whole] = await Promise.all([readAudit(scope, given), readAudit(scope, { ...given, limit: 1000 })]);
  const record = whole.events.map(eventShape);
  for (const event of page.events.map(eventShape)) {
    if (!record.includes(event)) throw new Error(`a page holds an event its own record does not: ${event}`);
  }
  // A page may take more than `limit` to hold a whole millisecond: how many more depends on timing.
  return { total: page.total, wholeTotal: whole.total, size: Math.min(page.events.length, given.limit), record: record.sort() };
}

/** An event without its time and request id, which differ between worlds. */
function eventShape(event: AuditEvent): string {
  const { at: _at, requestId: _requestId, ...rest } = event;
  return JSON.stringify(rest);
}

async function storedEvents(world: MigratedDatabase, tenant: string): Promise<unknown[]> {
  return world.knex('account_events').where({ tenant }).select('account_uid', 'account_username', 'action', 'actor_uid', 'actor_username', 'actor_cli', 'fields').orderBy('id');
}
