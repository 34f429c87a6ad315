import test from 'ava';
import type { Knex } from 'knex';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { withTenantDatabase, testKnex } from './database.ts';
import { hmacToken, systemClaims } from './forged-tokens.ts';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl } from './service.ts';
import type { Exchange, PlannedRequest } from './steady-load.ts';

/**
 * The two-tenant workload of the fleet test (test/stress/fleet.test.ts): space writes and reads,
 * document operations through a project route, getOneAccount, logins, and probes for the other
 * tenant's rows. Worker `w` works for tenant `alpha` (even `w`) or `beta` (odd) and touches only
 * names of its own (`alpha-w0-r3`), so every answer but the whole space list is decided by
 * `(worker, step)` alone, however the workers interleave: the same script gives the same
 * answers through any deployment, and the state it leaves is known (`expectedState`).
 */
export const TENANTS = ['alpha', 'beta'] as const;
export const PASSWORD = 'fleet-password-1';

/** The admin account of a tenant, who runs its workers. */
export const adminOf = (tenant: string): string => `${tenant}-admin`;

/** The test file's database with both tenants: its owner's connection, and a system JWT of each tenant's admin. */
export interface FleetDatabase {
  owner: Knex;
  readonly tokens: Record<string, string>;
}

/**
 * Before the file's tests, migrates the test database and makes both tenants and their admins;
 * after them, drops it. The fields are set once the `before` hook has run.
 */
export function fleetDatabaseForFile(): FleetDatabase {
  const fleet = { tokens: {} } as FleetDatabase;
  test.before(async () => {
    const url = await testDatabaseUrl();
    fleet.owner = testKnex(url);
    await migrateLatest(fleet.owner);
    for (const tenant of TENANTS) {
      await createTenant(fleet.owner, tenant);
      const { account } = await withTenantDatabase(url, (database) => saveAccount(database, tenant, { username: adminOf(tenant), password: PASSWORD, role: 'admin' }));
      fleet.tokens[tenant] = hmacToken({ alg: 'HS256', typ: 'JWT' }, systemClaims(account.uid, tenant), TEST_JWT_SECRET);
    }
  });
  test.after.always(async () => {
    await fleet.owner?.destroy();
    await dropTestDatabase();
  });
  return fleet;
}

/** One request of the script and the status it must get. */
export interface ScriptStep extends PlannedRequest {
  readonly worker: number;
  readonly tenant: string;
  readonly expected: number;
  /** False where the body depends on other workers' progress (the whole space list). */
  readonly comparable: boolean;
}

/** Requests per round of a worker's script. */
export const STEPS_PER_ROUND = 15;

export const tenantOf = (worker: number): string => TENANTS[worker % 2] ?? 'alpha';
const otherTenant = (tenant: string): string => (tenant === 'alpha' ? 'beta' : 'alpha');
/** The name worker `worker` gives its space and its note in round `round`. */
const nameOf = (worker: number, round: number): string => `${tenantOf(worker)}-w${worker}-r${round}`;

type Planned = Omit<ScriptStep, 'worker' | 'tenant' | 'label' | 'url' | 'init'> & { method: string; path: string; body?: unknown; anonymous?: boolean };

/** What step `position` of round `round` does; the peer is the other tenant's worker of the same slot. */
function plan(worker: number, round: number, position: number): Planned {
  const tenant = tenantOf(worker);
  const name = nameOf(worker, round);
  const peer = nameOf(worker ^ 1, round);
  const odd = round % 2 === 1;
  const steps: Planned[] = [
    { method: 'POST', path: '/spaces', body: { name, schemas: ['s1'] }, expected: 201, comparable: true },
    { method: 'GET', path: `/spaces/${name}`, expected: 200, comparable: true },
    { method: 'PUT', path: `/spaces/${name}`, body: { schemas: ['s1', 's2'] }, expected: 200, comparable: true },
    { method: 'GET', path: `/spaces/${peer}`, expected: 404, comparable: true },
    { method: 'POST', path: '/api/notes', body: { id: name, text: 'first', worker }, expected: 201, comparable: true },
    { method: 'GET', path: `/api/notes/${name}`, expected: 200, comparable: true },
    { method: 'PUT', path: `/api/notes/${name}`, body: { text: 'second' }, expected: 200, comparable: true },
    { method: 'GET', path: `/api/notes/${peer}`, expected: 404, comparable: true },
    { method: 'GET', path: `/api/notes?worker=${worker}`, expected: 200, comparable: true },
    round % 4 === 0
      ? { method: 'POST', path: '/auth/login', body: { username: adminOf(tenant), password: PASSWORD }, anonymous: true, expected: 200, comparable: true }
      : { method: 'POST', path: '/api/sample/getOneAccount', body: { EMPLOYEE_ID: adminOf(tenant) }, anonymous: true, expected: 200, comparable: true },
    { method: 'POST', path: '/api/project/getOneAccount', body: { EMPLOYEE_ID: adminOf(otherTenant(tenant)) }, anonymous: true, expected: 200, comparable: true },
    { method: 'GET', path: '/spaces', expected: 200, comparable: false },
    odd ? { method: 'DELETE', path: `/spaces/${name}`, expected: 200, comparable: true } : { method: 'GET', path: `/spaces/${name}`, expected: 200, comparable: true },
    odd
      ? { method: 'DELETE', path: `/api/notes/${name}`, expected: 200, comparable: true }
      : { method: 'DELETE', path: `/api/notes/${peer}`, expected: 200, comparable: true },
    { method: 'DELETE', path: `/spaces/${peer}`, expected: 404, comparable: true },
  ];
  const step = steps[position];
  if (step === undefined) throw new Error(`no step ${position}`);
  return step;
}

/** The `sequence`-th request of worker `worker` against `origin`, with `tokens` (per tenant) for its system JWT. */
export function scriptStep(origin: string, tokens: Record<string, string>, worker: number, sequence: number): ScriptStep {
  const round = Math.floor(sequence / STEPS_PER_ROUND);
  const { method, path, body, anonymous, expected, comparable } = plan(worker, round, sequence % STEPS_PER_ROUND);
  const tenant = tenantOf(worker);
  const headers: Record<string, string> = { tenant };
  if (!anonymous) headers.authorization = `Bearer ${tokens[tenant]}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const init: RequestInit = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  return { label: `w${worker} #${sequence} ${method} ${path}`, url: `${origin}${path}`, init, worker, tenant, expected, comparable };
}

/** The first `steps` requests of worker `worker`. */
export function workerScript(origin: string, tokens: Record<string, string>, worker: number, steps: number): ScriptStep[] {
  return Array.from({ length: steps }, (_, sequence) => scriptStep(origin, tokens, worker, sequence));
}

/** An answer as comparable across deployments: what depends on the clock (timestamps, a login's token) masked. */
export function comparableBody(body: string): unknown {
  try {
    return JSON.parse(body, (key, value: unknown) => (['createdAt', 'updatedAt', 'token'].includes(key) ? '<varies>' : value));
  } catch {
    return body;
  }
}

/** True when an answer to a request of `tenant` shows a name of the other tenant. */
export function leaks(exchange: Exchange, tenant: string): boolean {
  return JSON.stringify(comparableBody(exchange.body)).includes(`${otherTenant(tenant)}-`);
}

/** Rows the workload writes, as stored: spaces and notes, each with its tenant. */
export interface FleetState {
  spaces: Array<{ tenant: string; name: string; schemas: string[] }>;
  notes: Array<{ tenant: string; id: string; text: string; worker: number }>;
}

/** The rows the workload left, read as the owner (across tenants), in a fixed order; a deleted space stays in the trash, and is not counted. */
export async function storedState(knex: Knex): Promise<FleetState> {
  const spaces = await knex('spaces').whereNull('deleted_at').select('tenant', 'name', 'schemas').orderByRaw('tenant, name collate "C"');
  const notes = await knex('documents')
    .where({ collection: 'notes' })
    .select('tenant', 'id', knex.raw("doc->>'text' as text"), knex.raw("(doc->>'worker')::int as worker"))
    .orderByRaw('tenant, id collate "C"');
  return { spaces, notes };
}

/** Removes every row the workload writes. */
export async function clearState(knex: Knex): Promise<void> {
  await knex('spaces').delete();
  await knex('documents').where({ collection: 'notes' }).delete();
}

/** The rows the workload leaves once each worker has had the number of requests `done` gives answered. */
export function expectedState(done: ReadonlyMap<number, number>): FleetState {
  const state: FleetState = { spaces: [], notes: [] };
  for (const [worker, steps] of done) {
    const tenant = tenantOf(worker);
    for (let round = 0; round * STEPS_PER_ROUND < steps; round++) {
      const reached = (position: number) => round * STEPS_PER_ROUND + position < steps;
      const name = nameOf(worker, round);
      const deleted = round % 2 === 1;
      if (reached(0) && !(deleted && reached(12))) state.spaces.push({ tenant, name, schemas: reached(2) ? ['s1', 's2'] : ['s1'] });
      if (reached(4) && !(deleted && reached(13))) state.notes.push({ tenant, id: name, text: reached(6) ? 'second' : 'first', worker });
    }
  }
  const order = (a: { tenant: string; key: string }, b: { tenant: string; key: string }) => (a.tenant === b.tenant ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.tenant < b.tenant ? -1 : 1);
  state.spaces.sort((a, b) => order({ tenant: a.tenant, key: a.name }, { tenant: b.tenant, key: b.name }));
  state.notes.sort((a, b) => order({ tenant: a.tenant, key: a.id }, { tenant: b.tenant, key: b.id }));
  return state;
}

/** Rows stored under one tenant that carry the other tenant's name. */
export function crossedRows(state: FleetState): unknown[] {
  return [...state.spaces.filter((space) => !space.name.startsWith(`${space.tenant}-`)), ...state.notes.filter((note) => !note.id.startsWith(`${note.tenant}-`))];
}
