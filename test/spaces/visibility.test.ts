import test from 'ava';
import { call, callerWith, listedSchemas, newTenant, spacePath, type AccountFields, type Caller } from '../helpers/spaces.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
serviceForFile({ expert: { spaces: { enabled: true } } }, (started) => {
  service = started;
});

/** The spaces every visibility test starts from, in a tenant of its own. */
const FIXTURE: Record<string, string[]> = {
  Empty: [],
  Finance: ['ledger', 'payroll'],
  HR: ['payroll', 'people'],
  Ops: ['metrics'],
};

interface World {
  readonly tenant: string;
  readonly admin: Caller;
  /** An account of this tenant with these permissions. */
  member(fields: Omit<AccountFields, 'username' | 'role'>): Promise<Caller>;
}

async function world(): Promise<World> {
  const tenant = await newTenant(service);
  const admin = await callerWith(service, tenant, { username: 'admin', role: 'admin' });
  for (const [name, schemas] of Object.entries(FIXTURE)) {
    const created = await call(service, 'POST', '/spaces', { as: admin, json: { name, schemas } });
    if (created.status !== 201) throw new Error(`fixture ${name}: ${created.status}`);
  }
  let members = 0;
  return {
    tenant,
    admin,
    member: (fields) => callerWith(service, tenant, { username: `member-${++members}`, role: 'member', ...fields }),
  };
}

async function visible(caller: Caller): Promise<Record<string, unknown>> {
  const list = await call(service, 'GET', '/spaces', { as: caller });
  if (list.status !== 200) throw new Error(`list: ${list.status}`);
  if (list.body.total !== (list.body.data as unknown[]).length) throw new Error('total differs from data');
  return listedSchemas(list);
}

test('an admin sees every space with every schema', async (t) => {
  const { admin, tenant } = await world();
  t.deepEqual(await visible(admin), FIXTURE);
  const restrictedAdmin = await callerWith(service, tenant, { username: 'narrow-admin', role: 'admin', spaces: ['Ops'], schemas: [] });
  t.deepEqual(await visible(restrictedAdmin), FIXTURE);
});

test('space list only (all schemas): the listed spaces, whole', async (t) => {
  const { member } = await world();
  t.deepEqual(await visible(await member({ spaces: ['HR', 'Empty'], schemas: ['*'] })), { Empty: [], HR: ['payroll', 'people'] });
});

test('an empty or absent space list means every space', async (t) => {
  const { member } = await world();
  t.deepEqual(await visible(await member({ spaces: [], schemas: ['*'] })), FIXTURE);
  t.deepEqual(await visible(await member({ schemas: ['*'] })), FIXTURE);
});

test('schema permissions only: spaces with a readable schema or none, schemas filtered', async (t) => {
  const { member } = await world();
  t.deepEqual(await visible(await member({ schemas: ['payroll'] })), { Empty: [], Finance: ['payroll'], HR: ['payroll'] });
  t.deepEqual(await visible(await member({ schemas: ['people', 'metrics', 'unknown'] })), { Empty: [], HR: ['people'], Ops: ['metrics'] });
});

test('both apply: the space list and the schema permissions', async (t) => {
  const { member } = await world();
  const both = await member({ spaces: ['Finance', 'Ops', 'Empty'], schemas: ['ledger', 'people'] });
  t.deepEqual(await visible(both), { Empty: [], Finance: ['ledger'] });
});

test('neither (no list, no schema permission): only spaces without schemas', async (t) => {
  const { member } = await world();
  t.deepEqual(await visible(await member({})), { Empty: [] });
  t.deepEqual(await visible(await member({ schemas: [] })), { Empty: [] });
});

test('GET one follows the same rules: hidden is 404, shown schemas are filtered', async (t) => {
  const { member } = await world();
  const caller = await member({ spaces: ['Finance', 'HR'], schemas: ['payroll'] });
  const shown = await call(service, 'GET', '/spaces/Finance', { as: caller });
  t.is(shown.status, 200);
  t.deepEqual((shown.body.data as Record<string, unknown>).schemas, ['payroll']);
  t.is((shown.body.data as Record<string, unknown>).name, 'Finance');
  for (const hidden of ['Ops', 'Empty']) {
    const answer = await call(service, 'GET', spacePath(hidden), { as: caller });
    t.deepEqual([answer.status, answer.body], [404, { error: 'space not found' }], hidden);
  }
  const noSchemas = await member({ spaces: ['Finance'] });
  t.is((await call(service, 'GET', '/spaces/Finance', { as: noSchemas })).status, 404);
});

test('schema order is kept when filtering', async (t) => {
  const { admin, member } = await world();
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'Ordered', schemas: ['z', 'm', 'a', 'q'] } });
  const caller = await member({ spaces: ['Ordered'], schemas: ['a', 'q', 'z'] });
  t.deepEqual(await visible(caller), { Ordered: ['z', 'a', 'q'] });
});

test('dangling names grant nothing: a list of deleted spaces sees no space, never all', async (t) => {
  const { admin, member } = await world();
  const caller = await member({ spaces: ['Ops', 'HR'], schemas: ['*'] });
  t.deepEqual(Object.keys(await visible(caller)), ['HR', 'Ops']);
  t.is((await call(service, 'DELETE', '/spaces/Ops', { as: admin })).status, 200);
  t.deepEqual(await visible(caller), { HR: ['payroll', 'people'] });
  t.is((await call(service, 'DELETE', '/spaces/HR', { as: admin })).status, 200);
  t.deepEqual(await visible(caller), {});
  t.is((await call(service, 'GET', '/spaces/Finance', { as: caller })).status, 404);
  t.deepEqual(await visible(await member({ spaces: ['never-existed'], schemas: ['*'] })), {});
});

test('a deleted space recreated under the same name is visible again to a list naming it', async (t) => {
  const { admin, member } = await world();
  const caller = await member({ spaces: ['Ops'], schemas: ['*'] });
  await call(service, 'DELETE', '/spaces/Ops', { as: admin });
  t.deepEqual(await visible(caller), {});
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'Ops', schemas: ['fresh'] } });
  t.deepEqual(await visible(caller), { Ops: ['fresh'] });
});

test('account changes apply at once: spaces, schemas and role are read on every call', async (t) => {
  const { tenant, member } = await world();
  const caller = await member({ spaces: ['Finance'], schemas: ['ledger'] });
  t.deepEqual(await visible(caller), { Finance: ['ledger'] });
  await callerWith(service, tenant, { username: 'member-1', spaces: ['Finance', 'HR'], schemas: ['ledger', 'people'] });
  t.deepEqual(await visible(caller), { Finance: ['ledger'], HR: ['people'] });
  await callerWith(service, tenant, { username: 'member-1', spaces: [], schemas: ['*'] });
  t.deepEqual(await visible(caller), FIXTURE);
  await callerWith(service, tenant, { username: 'member-1', schemas: [] });
  t.deepEqual(await visible(caller), { Empty: [] });
  await callerWith(service, tenant, { username: 'member-1', role: 'admin' });
  t.deepEqual(await visible(caller), FIXTURE);
});

test('visibility never reaches another tenant', async (t) => {
  const first = await world();
  const second = await world();
  await call(service, 'POST', '/spaces', { as: second.admin, json: { name: 'SecondOnly', schemas: ['x'] } });
  const reader = await first.member({ spaces: ['SecondOnly', 'Ops'], schemas: ['*'] });
  t.deepEqual(await visible(reader), { Ops: ['metrics'] });
  t.is((await call(service, 'GET', '/spaces/SecondOnly', { as: reader })).status, 404);
});
