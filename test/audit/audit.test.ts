import test from 'ava';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { call, callerWith, newTenant, type Caller, type CallResult } from '../helpers/spaces.ts';
import { serviceForFile, startTestService, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
let admin: Caller;
let member: Caller;

serviceForFile({ expert: { spaces: { enabled: true } } }, async (started) => {
  service = started;
  admin = await callerWith(service, 'default', { username: 'root', role: 'admin' });
  member = await callerWith(service, 'default', { username: 'mia', role: 'member', schemas: ['*'] });
});

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface Event {
  action: string;
  at: string;
  actor: { uid: string; username: string | null } | { cli: true } | null;
  requestId: string;
  requestIdFrom: 'caller' | 'service' | null;
  target: Record<string, string>;
  before?: { schemas: string[] } | null;
  after?: { schemas: string[] } | null;
  fields?: string[];
}

const eventsOf = (answer: CallResult): Event[] => answer.body.data as Event[];

function audit(query = '', as: Caller = admin): Promise<CallResult> {
  return call(service, 'GET', `/audit${query}`, { as });
}

/** A tenant of its own with an admin, so a test can assert its whole record. */
async function freshTenant(): Promise<{ tenant: string; boss: Caller }> {
  const tenant = await newTenant(service);
  return { tenant, boss: await callerWith(service, tenant, { username: 'boss', role: 'admin' }) };
}

test('space and account events of the tenant, newest first, each with its target, actor and request', async (t) => {
  const { boss } = await freshTenant();
  const created = await call(service, 'POST', '/spaces', { as: boss, json: { name: 'ops', schemas: ['a'] } });
  const replaced = await call(service, 'PUT', '/spaces/ops', { as: boss, json: { schemas: ['a', 'b'] } });
  const deleted = await call(service, 'DELETE', '/spaces/ops', { as: boss });
  t.is(deleted.status, 200);
  const answer = await audit('', boss);
  t.is(answer.status, 200);
  t.is(answer.body.success, true);
  t.is(answer.body.total, 4);
  const [gone, changed, made, account] = eventsOf(answer);
  const bossActor = { uid: boss.uid, username: 'boss' };
  t.deepEqual(gone, { action: 'space.deleted', at: gone?.at, actor: bossActor, requestId: deleted.headers.get('x-request-id'), requestIdFrom: 'service', target: { name: 'ops' }, before: { schemas: ['a', 'b'] }, after: null });
  t.deepEqual(changed, { action: 'space.updated', at: changed?.at, actor: bossActor, requestId: replaced.headers.get('x-request-id'), requestIdFrom: 'service', target: { name: 'ops' }, before: { schemas: ['a'] }, after: { schemas: ['a', 'b'] } });
  t.like(made, { action: 'space.created', requestId: created.headers.get('x-request-id'), requestIdFrom: 'service', before: null, after: { schemas: ['a'] } });
  // The admin was saved by the test itself, outside any request: no actor, no request id, so no source of one.
  t.deepEqual(account, { action: 'account.created', at: account?.at, actor: null, requestId: '', requestIdFrom: null, target: { uid: boss.uid, username: 'boss' }, fields: ['password', 'role', 'username'] });
  for (const event of eventsOf(answer)) t.regex(event.at, ISO_UTC);
  const times = eventsOf(answer).map((event) => event.at);
  t.deepEqual(times, [...times].sort().reverse());
});


test('the audit says whose request id each event holds: the caller\'s when its X-Request-Id was well formed, the service\'s otherwise, null outside a request and for events older than the record of it', async (t) => {
  const { tenant, boss } = await freshTenant();
  const byCaller = await call(service, 'POST', '/spaces', { as: boss, json: { name: 'ops', schemas: [] }, headers: { 'x-request-id': 'ticket-7781' } });
  const byService = await call(service, 'PUT', '/spaces/ops', { as: boss, json: { schemas: ['a'] }, headers: { 'x-request-id': 'two words' } });
  // An account event as the release before wrote it, without the column.
  await service.runtime.knex('account_events').insert({ tenant, account_uid: boss.uid, account_username: 'boss', action: 'updated', at: new Date(Date.now() + 60_000), request_id: 'old-release', fields: ['email'] });
  const [older, replaced, created, account] = eventsOf(await audit('', boss));
  t.like(older, { action: 'account.updated', requestId: 'old-release', requestIdFrom: null });
  t.like(replaced, { action: 'space.updated', requestId: byService.headers.get('x-request-id'), requestIdFrom: 'service' });
  t.like(created, { action: 'space.created', requestId: byCaller.headers.get('x-request-id'), requestIdFrom: 'caller' });
  t.is(byCaller.headers.get('x-request-id'), 'ticket-7781');
  t.like(account, { action: 'account.created', requestId: '', requestIdFrom: null });
});

test('an account update lists the fields it changed, by name; one that changes nothing leaves no event', async (t) => {
  const { tenant, boss } = await freshTenant();
  await saveAccount(service.runtime.tenantDatabase, tenant, { username: 'kim', password: 'first-secret', role: 'member', team: 'red' });
  await saveAccount(service.runtime.tenantDatabase, tenant, { username: 'kim', role: 'member', team: 'red' });
  await saveAccount(service.runtime.tenantDatabase, tenant, { username: 'kim', role: 'admin', team: 'red', spaces: ['ops'] });
  await saveAccount(service.runtime.tenantDatabase, tenant, { username: 'kim', password: 'second-secret' }, { actor: { cli: true } });
  const updates = eventsOf(await audit('?action=account.updated', boss));
  t.deepEqual(
    updates.map(({ fields, actor, target }) => ({ fields, actor, username: target.username })),
    [
      { fields: ['password'], actor: { cli: true }, username: 'kim' },
      { fields: ['role', 'spaces'], actor: null, username: 'kim' },
    ],
  );
  t.deepEqual(eventsOf(await audit('?action=account.created', boss)).map((event) => [event.target.username, event.fields]), [
    ['kim', ['password', 'role', 'team', 'username']],
    ['boss', ['password', 'role', 'username']],
  ]);
});

test('?action= and ?actor= filter; total counts what matches', async (t) => {
  const { tenant, boss } = await freshTenant();
  const helper = await callerWith(service, tenant, { username: 'helper', role: 'admin' });
  await call(service, 'POST', '/spaces', { as: boss, json: { name: 'one' } });
  await call(service, 'POST', '/spaces', { as: helper, json: { name: 'two' } });
  await call(service, 'PUT', '/spaces/two', { as: helper, json: { schemas: ['x'] } });
  await saveAccount(service.runtime.tenantDatabase, tenant, { username: 'cli', password: 'pw-cli' }, { actor: { cli: true } });
  const names = (answer: CallResult) => eventsOf(answer).map((event) => `${event.action} ${event.target.name ?? event.target.username}`);
  const created = await audit('?action=space.created', boss);
  t.deepEqual([names(created), created.body.total], [['space.created two', 'space.created one'], 2]);
  const byHelper = await audit(`?actor=${helper.uid}`, boss);
  t.deepEqual([names(byHelper), byHelper.body.total], [['space.updated two', 'space.created two'], 2]);
  t.deepEqual(names(await audit('?actor=helper', boss)), ['space.updated two', 'space.created two'], 'a username matches too');
  t.deepEqual(names(await audit('?actor=helper&action=space.created', boss)), ['space.created two']);
  t.deepEqual(names(await audit('?actor=cli', boss)), ['account.created cli']);
  t.deepEqual(names(await audit('?actor=nobody', boss)), []);
  t.is((await audit('?actor=nobody', boss)).body.total, 0);
});

test('401 without a valid token, 403 for a member, 400 for a bad tenant: as the spaces API answers', async (t) => {
  const anonymous = await call(service, 'GET', '/audit', { as: { tenant: 'default' } });
  t.deepEqual([anonymous.status, anonymous.body], [401, { error: 'authentication required' }]);
  t.is(anonymous.headers.get('www-authenticate'), 'Bearer');
  const forged = await call(service, 'GET', '/audit', { as: { tenant: 'default', token: 'not-a-token' } });
  t.is(forged.status, 401);
  const byMember = await audit('', member);
  t.deepEqual([byMember.status, byMember.body], [403, { error: 'admin role required' }]);
  const strange = await call(service, 'GET', '/audit', { as: { tenant: 'no such tenant!', token: admin.token } });
  t.is(strange.status, 400);
  const otherTenant = await newTenant(service);
  t.is((await call(service, 'GET', '/audit', { as: { tenant: otherTenant, token: admin.token } })).status, 401, "a token of another tenant");
});

test('?limit and ?before page through the record without a gap or an overlap', async (t) => {
  const { boss } = await freshTenant();
  await call(service, 'POST', '/spaces', { as: boss, json: { name: 'paged' } });
  for (let index = 0; index < 5; index += 1) await call(service, 'PUT', '/spaces/paged', { as: boss, json: { schemas: [`s${index}`] } });
  const all = eventsOf(await audit('', boss));
  t.is(all.length, 7);
  const pages: Event[][] = [];
  let query = '?limit=3';
  for (;;) {
    const page = await audit(query, boss);
    t.is(page.body.total, 7);
    pages.push(eventsOf(page));
    const last = eventsOf(page).at(-1);
    if (eventsOf(page).length < 3 || last === undefined) break;
    query = `?limit=3&before=${encodeURIComponent(last.at)}`;
  }
  t.deepEqual(pages.map((page) => page.length), [3, 3, 1]);
  t.deepEqual(pages.flat(), all);
  t.is(eventsOf(await audit('?limit=1', boss)).length, 1);
  t.is(eventsOf(await audit('?limit=1000', boss)).length, 7);
});

test('events of one millisecond are never split between pages, so paging by ?before= misses none', async (t) => {
  const { tenant, boss } = await freshTenant();
  const at = new Date('2026-01-02T03:04:05.678Z');
  await service.runtime.knex('space_events').insert(['a', 'b', 'c'].map((space) => ({ tenant, space, action: 'created', at, after: { schemas: [] } })));
  await service.runtime.knex('account_events').insert({ tenant, account_uid: 'u1', account_username: 'someone', action: 'updated', at, fields: ['role'] });
  await service.runtime.knex('space_events').insert({ tenant, space: 'old', action: 'created', at: new Date(at.getTime() - 1), after: { schemas: [] } });
  const before = encodeURIComponent(new Date(at.getTime() + 1).toISOString());
  const first = eventsOf(await audit(`?limit=2&before=${before}`, boss));
  t.deepEqual(first.map((event) => event.target.name ?? event.target.username), ['c', 'b', 'a', 'someone'], 'the whole millisecond, in one order');
  const second = eventsOf(await audit(`?limit=2&before=${encodeURIComponent(first.at(-1)?.at ?? '')}`, boss));
  t.deepEqual(second.map((event) => event.target.name ?? event.target.username), ['old']);
});

test('?before= finer than a millisecond keeps the events of its millisecond, which are older than it', async (t) => {
  const { tenant, boss } = await freshTenant();
  const at = new Date('2026-01-02T03:04:05.678Z');
  await service.runtime.knex('space_events').insert({ tenant, space: 'fine', action: 'created', at, after: { schemas: [] } });
  for (const before of ['2026-01-02T03:04:05.6781Z', '2026-01-02T03:04:05.678999999Z']) {
    t.deepEqual(eventsOf(await audit(`?before=${before}`, boss)).map((event) => event.target.name), ['fine'], before);
    const history = await call(service, 'GET', `/spaces/fine/history?before=${before}`, { as: boss });
    t.is((history.body.data as unknown[]).length, 1, before);
  }
  for (const before of ['2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05.6780Z', '2026-01-02T03:04:05.678000Z']) {
    t.deepEqual(eventsOf(await audit(`?before=${before}`, boss)), [], before);
  }
});

test('a wrong ?limit, ?before, ?action or ?actor, or any other parameter, is 400 naming it', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['?limit=0', /^query\.limit: /],
    ['?limit=1001', /^query\.limit: /],
    ['?limit=abc', /^query\.limit: /],
    ['?limit=2.5', /^query\.limit: /],
    ['?before=yesterday', /^query\.before: /],
    ['?before=0000-01-01T00:00:00Z', /^query\.before: /],
    ['?action=created', /^query\.action: must be one of space\.created, /],
    ['?actor=', /^query\.actor: must not be empty/],
    ['?actor=a&actor=b', /^query\.actor: /],
    ['?actor=%00', /^query\.actor: must not contain NUL/],
    ['?limt=3', /^query: unknown parameter: limt$/],
    ['?foo=1&limit=2&bar=', /^query: unknown parameters: foo, bar$/],
  ];
  for (const [query, message] of cases) {
    const answer = await audit(query);
    t.is(answer.status, 400, query);
    t.regex(String(answer.body.error), message, query);
  }
});

test('GET /spaces and a space\'s history refuse a parameter they do not know, as the audit does: a misspelt ?trashed must not list the live spaces', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['/spaces?trashd=true', /^query: unknown parameter: trashd$/],
    ['/spaces?trashed=true&limit=5&x=', /^query: unknown parameters: limit, x$/],
    ['/spaces/anything/history?limt=3', /^query: unknown parameter: limt$/],
    ['/spaces/anything/history?action=space.created', /^query: unknown parameter: action$/],
  ];
  for (const [target, message] of cases) {
    const answer = await call(service, 'GET', target, { as: admin });
    t.is(answer.status, 400, target);
    t.regex(String(answer.body.error), message, target);
  }
  t.is((await call(service, 'GET', '/spaces?trashed=false', { as: admin })).status, 200);
});

test('a parameter given twice is told to be given once, whichever it is', async (t) => {
  const answer = await audit('?limit=5&limit=6&before=2026-01-01T00:00:00Z&before=2026-01-02T00:00:00Z&action=space.created&action=space.deleted&actor=a&actor=b');
  t.is(answer.status, 400);
  t.deepEqual(answer.body.errors, ['limit', 'before', 'action', 'actor'].map((name) => ({ path: `query.${name}`, message: 'must be given once' })));
  const trash = await call(service, 'GET', '/spaces?trashed=true&trashed=true', { as: admin });
  t.deepEqual(trash.body.errors, [{ path: 'query.trashed', message: 'must be given once' }]);
  const history = await call(service, 'GET', '/spaces/anything/history?limit=1&limit=2', { as: admin });
  t.deepEqual(history.body.errors, [{ path: 'query.limit', message: 'must be given once' }]);
});

test("another tenant's events never appear, even for the same names", async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'shared-name', schemas: ['mine'] } });
  const { boss } = await freshTenant();
  await call(service, 'POST', '/spaces', { as: boss, json: { name: 'shared-name', schemas: ['theirs'] } });
  const theirs = eventsOf(await audit('?limit=1000', boss));
  t.deepEqual(theirs.map((event) => event.action), ['space.created', 'account.created']);
  t.deepEqual(theirs[0]?.after, { schemas: ['theirs'] });
  const mine = eventsOf(await audit('?limit=1000'));
  t.false(mine.some((event) => event.actor !== null && 'uid' in event.actor && event.actor.uid === boss.uid));
  t.false(mine.some((event) => JSON.stringify(event).includes('theirs')));
  t.deepEqual((await audit(`?actor=${boss.uid}`)).body, { success: true, data: [], total: 0 });
});

test('GET /audit answers while the spaces feature is off: the accounts are the tenant\'s whatever the switch', async (t) => {
  const off = await startTestService(t, { expert: { spaces: { enabled: false } } });
  const { boss } = await freshTenant();
  const spaces = await call(off, 'GET', '/spaces', { as: boss });
  t.deepEqual([spaces.status, spaces.body], [404, { error: 'spaces feature is disabled' }]);
  const answer = await call(off, 'GET', '/audit', { as: boss });
  t.is(answer.status, 200);
  t.deepEqual(eventsOf(answer).map((event) => event.action), ['account.created']);
});
