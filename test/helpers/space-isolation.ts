import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { SpaceAccess } from '../../lib/spaces/access.ts';
import type { HistoryPage } from '../../lib/spaces/history.ts';
import { deleteSpace, findVisibleSpace, insertSpace, listVisibleSpaces, replaceSpaceSchemas, spaceHistory, type Space, type StoredSpace } from '../../lib/spaces/store.ts';
import { listTrashedSpaces, purgeExpiredSpaces, restoreSpace, type RestoreOutcome } from '../../lib/spaces/trash.ts';
import type { Runtime } from '../../lib/core/runtime.ts';
import { runInTenant } from '../../lib/tenancy/index.ts';
import { migratedDatabase, type MigratedDatabase, type TenantDatabaseRoute } from './database.ts';

/**
 * The isolation property for the spaces store, as a differential test over three databases:
 * `shared` holds tenants alpha and beta, `alphaAlone` and `betaAlone` one each. Both tenants
 * run their commands at the same moment in `shared` (concurrent writes on the same names) and
 * on their own in their lone world: each must see, write and keep exactly the same.
 */
export interface SpaceWorlds {
  readonly shared: MigratedDatabase;
  readonly alphaAlone: MigratedDatabase;
  readonly betaAlone: MigratedDatabase;
  close(): Promise<void>;
}

/** The three worlds; the service's view of each goes through `route` when given (a pooler). */
export async function spaceWorlds(route?: TenantDatabaseRoute): Promise<SpaceWorlds> {
  const [shared, alphaAlone, betaAlone] = await Promise.all([migratedDatabase(['alpha', 'beta'], route), migratedDatabase(['alpha'], route), migratedDatabase(['beta'], route)]);
  return { shared, alphaAlone, betaAlone, close: async () => void (await Promise.all([shared.close(), alphaAlone.close(), betaAlone.close()])) };
}

const NAMES = ['ops', 'Ops', 'sales', 'é', 'e\u0301', 'a b', 'x.y', 'z-1'];
const SCHEMAS = ['s1', 's2', 'S1', '*', 'x'];

const names = fc.uniqueArray(fc.constantFrom(...SCHEMAS), { maxLength: 3 });
const grant = fc.oneof(fc.constant({ all: true } as const), fc.uniqueArray(fc.constantFrom(...NAMES, ...SCHEMAS), { maxLength: 3 }).map((listed) => ({ all: false, names: listed }) as const));
const access: fc.Arbitrary<SpaceAccess> = fc.record({ admin: fc.boolean(), spaces: grant, schemas: grant });
const name = fc.constantFrom(...NAMES);

type SpaceCommand =
  | { kind: 'list'; access: SpaceAccess }
  | { kind: 'find'; name: string; access: SpaceAccess }
  | { kind: 'insert'; name: string; schemas: string[] }
  | { kind: 'replace'; name: string; schemas: string[] }
  | { kind: 'delete'; name: string; trashDays: number }
  | { kind: 'history'; name: string; limit: number }
  | { kind: 'trashed' }
  | { kind: 'restore'; name: string }
  | { kind: 'purge' };

const command: fc.Arbitrary<SpaceCommand> = fc.oneof(
  access.map((given) => ({ kind: 'list', access: given }) as const),
  fc.record({ name, access }).map((given) => ({ kind: 'find', ...given }) as const),
  fc.record({ name, schemas: names }).map((given) => ({ kind: 'insert', ...given }) as const),
  fc.record({ name, schemas: names }).map((given) => ({ kind: 'replace', ...given }) as const),
  fc.record({ name, trashDays: fc.constantFrom(0, 30) }).map((given) => ({ kind: 'delete', ...given }) as const),
  fc.record({ name, limit: fc.integer({ min: 1, max: 5 }) }).map((given) => ({ kind: 'history', ...given }) as const),
  fc.constant({ kind: 'trashed' } as const),
  name.map((given) => ({ kind: 'restore', name: given }) as const),
  // With 0 days every trashed space of the tenant is past its days.
  fc.constant({ kind: 'purge' } as const),
);

/** Steps of the case: in each, alpha and beta run one command each, at once. */
export const spaceCase = fc.array(fc.record({ alpha: command, beta: command }), { minLength: 1, maxLength: 8 });
export type SpaceCase = Array<{ alpha: SpaceCommand; beta: SpaceCommand }>;

/**
 * Runs each step's two commands in every world at once, and throws at the first answer a tenant
 * gets beside the other that it does not get alone.
 */
export async function compareAnswers<Command extends { readonly kind: string }>(
  worlds: SpaceWorlds,
  steps: ReadonlyArray<{ readonly alpha: Command; readonly beta: Command }>,
  run: (world: MigratedDatabase, tenant: string, command: Command) => Promise<unknown>,
): Promise<void> {
  for (const [index, step] of steps.entries()) {
    const [alphaShared, betaShared, alphaAlone, betaAlone] = await Promise.all([
      run(worlds.shared, 'alpha', step.alpha),
      run(worlds.shared, 'beta', step.beta),
      run(worlds.alphaAlone, 'alpha', step.alpha),
      run(worlds.betaAlone, 'beta', step.beta),
    ]);
    if (!isDeepStrictEqual(alphaShared, alphaAlone)) throw new Error(`step ${index}: alpha's ${step.alpha.kind} differs beside beta: ${JSON.stringify(alphaShared)} vs ${JSON.stringify(alphaAlone)}`);
    if (!isDeepStrictEqual(betaShared, betaAlone)) throw new Error(`step ${index}: beta's ${step.beta.kind} differs beside alpha: ${JSON.stringify(betaShared)} vs ${JSON.stringify(betaAlone)}`);
  }
}

/** Runs every step in every world and throws at the first difference. */
export async function checkSpaceIsolation(worlds: SpaceWorlds, steps: SpaceCase): Promise<void> {
  await Promise.all([worlds.shared, worlds.alphaAlone, worlds.betaAlone].flatMap((world) => [world.knex('spaces').delete(), world.knex('space_events').delete()]));
  await compareAnswers(worlds, steps, run);
  for (const tenant of ['alpha', 'beta']) {
    const alone = tenant === 'alpha' ? worlds.alphaAlone : worlds.betaAlone;
    const [inShared, inAlone] = await Promise.all([storedSpaces(worlds.shared, tenant), storedSpaces(alone, tenant)]);
    if (!isDeepStrictEqual(inShared, inAlone)) throw new Error(`${tenant}'s stored spaces differ beside the other tenant`);
    const [eventsShared, eventsAlone] = await Promise.all([storedEvents(worlds.shared, tenant), storedEvents(alone, tenant)]);
    if (!isDeepStrictEqual(eventsShared, eventsAlone)) throw new Error(`${tenant}'s space events differ beside the other tenant`);
  }
}

/** A space without its timestamps, which differ between worlds. */
function shape(stored: Space | StoredSpace | undefined): unknown {
  const space = stored !== undefined && 'space' in stored ? stored.space : stored;
  return space && { name: space.name, schemas: space.schemas };
}

function run(world: MigratedDatabase, tenant: string, given: SpaceCommand): Promise<unknown> {
  const runtime = { tenantDatabase: world.tenantDatabase } as Runtime;
  return runInTenant(runtime, tenant, async () => {
    switch (given.kind) {
      case 'list':
        return (await listVisibleSpaces(given.access)).map(shape);
      case 'find':
        return shape(await findVisibleSpace(given.name, given.access));
      case 'insert':
        return shape(await insertSpace({ name: given.name, schemas: given.schemas }));
      case 'replace':
        return shape(await replaceSpaceSchemas(given.name, given.schemas));
      case 'delete':
        return shape(await deleteSpace(given.name, given.trashDays));
      case 'history':
        return historyShape(await spaceHistory(given.name, { limit: given.limit }));
      case 'trashed':
        return (await listTrashedSpaces(TRASH_DAYS)).map(shape);
      case 'restore':
        return restoreShape(await restoreSpace(given.name, TRASH_DAYS));
      case 'purge':
        return purgeExpiredSpaces({ database: world.tenantDatabase, tenant, stillWanted: () => true }, 0);
    }
  });
}

const TRASH_DAYS = 30;

function restoreShape(outcome: RestoreOutcome): unknown {
  return outcome.restored === undefined ? { live: outcome.live } : shape(outcome.restored);
}

/** A page of history without its times and request ids, which differ between worlds. */
function historyShape(page: HistoryPage | undefined): unknown {
  return page && { total: page.total, events: page.events.map(({ action, before, after }) => ({ action, before, after })) };
}

async function storedEvents(world: MigratedDatabase, tenant: string): Promise<unknown[]> {
  return world.knex('space_events').where({ tenant }).select('space', 'action', 'before', 'after').orderBy('id');
}

async function storedSpaces(world: MigratedDatabase, tenant: string): Promise<unknown[]> {
  return world.knex('spaces').where({ tenant }).select('name', 'schemas', world.knex.raw('deleted_at is not null as trashed')).orderByRaw('name collate "C"');
}
