import test from 'ava';
import { call, callerWith, newTenant, type Caller, type CallResult } from '../helpers/spaces.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

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
  actor: { uid: string; username: string | null } | null;
  requestId: string;
  requestIdFrom: 'caller' | 'service' | null;
  before: { schemas: string[] } | null;
  after: { schemas: string[] } | null;
}

const eventsOf = (answer: CallResult): Event[] => answer.body.data as Event[];

async function history(name: string, query = '', as: Caller = admin): Promise<CallResult> {
  return call(service, 'GET', `/spaces/${encodeURIComponent(name)}/history${query}`, { as });
}

test('one event per change, newest first, naming who, when, the request and what changed; kept after a delete', async (t) => {
  const created = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'tracked', schemas: ['a'] } });
  const replaced = await call(service, 'PUT', '/spaces/tracked', { as: admin, json: { schemas: ['a', 'b'] } });
  const deleted = await call(service, 'DELETE', '/spaces/tracked', { as: admin });
  t.is(deleted.status, 200);
  const answer = await history('tracked');
  t.is(answer.status, 200);
  t.is(answer.body.success, true);
  t.is(answer.body.total, 3);
  const events = eventsOf(answer);
  t.deepEqual(
    events.map(({ action, before, after }) => ({ action, before, after })),
    [
      { action: 'deleted', before: { schemas: ['a', 'b'] }, after: null },
      { action: 'updated', before: { schemas: ['a'] }, after: { schemas: ['a', 'b'] } },
      { action: 'created', before: null, after: { schemas: ['a'] } },
    ],
  );
  t.deepEqual(
    events.map((event) => event.requestId),
    [deleted, replaced, created].map((answered) => answered.headers.get('x-request-id')),
  );
  for (const event of events) {
    t.deepEqual(event.actor, { uid: admin.uid, username: 'root' });
    t.regex(event.at, ISO_UTC);
  }
  const times = events.map((event) => event.at);
  t.deepEqual(times, [...new Set(times)].sort().reverse(), 'strictly ordered in time');
});

test('each event says whose request id it is: the caller\'s X-Request-Id when well formed, else the id the service gave', async (t) => {
  const byCaller = await call(service, 'POST', '/spaces', { as: admin, json: { name: 'sourced', schemas: [] }, headers: { 'x-request-id': 'deploy-42.step:1' } });
  // A caller may choose an id that looks like one of the service's: the record still tells them apart.
  const lookalike = await call(service, 'PUT', '/spaces/sourced', { as: admin, json: { schemas: ['a'] }, headers: { 'x-request-id': '0b5f1c3e-5d2a-4c1e-9f7a-2b6c8d9e0f11' } });
  const malformed = await call(service, 'PUT', '/spaces/sourced', { as: admin, json: { schemas: ['b'] }, headers: { 'x-request-id': 'not well formed!' } });
  const tooLong = await call(service, 'PUT', '/spaces/sourced', { as: admin, json: { schemas: ['c'] }, headers: { 'x-request-id': 'x'.repeat(129) } });
  const unnamed = await call(service, 'DELETE', '/spaces/sourced', { as: admin });
  t.is(byCaller.headers.get('x-request-id'), 'deploy-42.step:1');
  t.is(lookalike.headers.get('x-request-id'), '0b5f1c3e-5d2a-4c1e-9f7a-2b6c8d9e0f11');
  for (const replaced of [malformed, tooLong, unnamed]) t.regex(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const events = eventsOf(await history('sourced'));
  t.deepEqual(
    events.map(({ requestId, requestIdFrom }) => ({ requestId, requestIdFrom })),
    [
      { requestId: unnamed.headers.get('x-request-id'), requestIdFrom: 'service' },
      { requestId: tooLong.headers.get('x-request-id'), requestIdFrom: 'service' },
      { requestId: malformed.headers.get('x-request-id'), requestIdFrom: 'service' },
      { requestId: '0b5f1c3e-5d2a-4c1e-9f7a-2b6c8d9e0f11', requestIdFrom: 'caller' },
      { requestId: 'deploy-42.step:1', requestIdFrom: 'caller' },
    ],
  );
});

test('an event recorded before the service kept whose request id it was says null', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'older', schemas: [] } });
  // As the release before wrote it: no request_id_from_caller.
  await service.runtime.knex('space_events').insert({ tenant: 'default', space: 'older', action: 'updated', at: new Date(), actor_uid: admin.uid, actor_username: 'root', request_id: 'from-before', before: JSON.stringify({ schemas: [] }), after: JSON.stringify({ schemas: ['z'] }) });
  const [older, created] = eventsOf(await history('older'));
  t.like(older, { requestId: 'from-before', requestIdFrom: null });
  t.like(created, { requestIdFrom: 'service' });
});

test('history is for admins; 404 only for a name that never existed (or could not exist)', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'secretive' } });
  t.deepEqual([(await history('secretive', '', member)).status, (await history('secretive', '', member)).body], [403, { error: 'admin role required' }]);
  for (const name of ['never-was', 'SECRETIVE', 'a/b', 'x'.repeat(65)]) {
    const missing = await history(name);
    t.deepEqual([missing.status, missing.body], [404, { error: 'space not found' }], name);
  }
});

test('a space made before history was kept has an empty history, not a 404', async (t) => {
  await service.runtime.knex('spaces').insert({ tenant: 'default', name: 'ancient', schemas: [] });
  t.deepEqual((await history('ancient')).body, { success: true, data: [], total: 0 });
});

test('?limit and ?before page through the history without a gap or an overlap', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'paged' } });
  for (let index = 0; index < 6; index += 1) await call(service, 'PUT', '/spaces/paged', { as: admin, json: { schemas: [`s${index}`] } });
  const all = eventsOf(await history('paged'));
  t.is(all.length, 7);
  const pages: Event[][] = [];
  let query = '?limit=3';
  for (;;) {
    const page = await history('paged', query);
    t.is(page.body.total, 7);
    pages.push(eventsOf(page));
    const last = eventsOf(page).at(-1);
    if (eventsOf(page).length < 3 || last === undefined) break;
    query = `?limit=3&before=${encodeURIComponent(last.at)}`;
  }
  t.deepEqual(pages.map((page) => page.length), [3, 3, 1]);
  t.deepEqual(pages.flat(), all);
  t.is(eventsOf(await history('paged', '?limit=1')).length, 1);
  t.is(eventsOf(await history('paged', '?limit=1000')).length, 7);
});

test('a wrong ?limit or ?before is 400 naming it', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'strict' } });
  for (const [query, field] of [['?limit=0', 'limit'], ['?limit=1001', 'limit'], ['?limit=abc', 'limit'], ['?limit=2.5', 'limit'], ['?before=yesterday', 'before'], ['?before=0000-01-01T00:00:00Z', 'before']]) {
    const answer = await history('strict', query);
    t.is(answer.status, 400, query);
    t.regex(String(answer.body.error), new RegExp(field as string), query);
  }
});

test('no password or hash in any event', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'clean', schemas: ['x'] } });
  await call(service, 'PUT', '/spaces/clean', { as: admin, json: { schemas: [] } });
  const account = await service.runtime.knex('documents').where({ tenant: 'default', collection: 'accounts', id: admin.uid }).first();
  const stored = JSON.stringify(account.doc);
  const text = JSON.stringify((await history('clean')).body);
  t.false(/password|hash|scrypt|argon/i.test(text));
  const secret = String((account.doc as { password: string }).password);
  t.true(stored.includes(secret) && !text.includes(secret));
});

/**
 * The fault in the middle: a trigger, for one tenant only, makes the event's insert fail (or
 * the commit, after the event was written). The change must then be rolled back with it.
 */
async function faultyTenant(t: { teardown: (fn: () => Promise<void>) => void }, when: 'insert' | 'commit'): Promise<{ tenant: string; boss: Caller }> {
  const tenant = await newTenant(service);
  const boss = await callerWith(service, tenant, { username: 'boss', role: 'admin' });
  await call(service, 'POST', '/spaces', { as: boss, json: { name: 'fragile', schemas: ['before'] } });
  const knex = service.runtime.knex;
  const fn = `fail_${tenant.replace(/-/g, '_')}`;
  await knex.raw(`create function ${fn}() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`);
  const trigger =
    when === 'insert'
      ? `create trigger ${fn} before insert on space_events for each row when (new.tenant = '${tenant}') execute function ${fn}()`
      : `create constraint trigger ${fn} after insert on space_events deferrable initially deferred for each row when (new.tenant = '${tenant}') execute function ${fn}()`;
  await knex.raw(trigger);
  t.teardown(async () => {
    await knex.raw(`drop trigger ${fn} on space_events`);
    await knex.raw(`drop function ${fn}()`);
  });
  return { tenant, boss };
}

async function assertNothingChanged(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }, tenant: string): Promise<void> {
  const spaces = await service.runtime.knex('spaces').where({ tenant }).select('name', 'schemas');
  t.deepEqual(spaces, [{ name: 'fragile', schemas: ['before'] }], 'the space is as it was');
  const events = await service.runtime.knex('space_events').where({ tenant }).select('action');
  t.deepEqual(events, [{ action: 'created' }], 'no event beyond the creation');
}

for (const when of ['insert', 'commit'] as const) {
  test(`a fault at the event's ${when} rolls the change back: no change without its event, no event without its change`, async (t) => {
    const { tenant, boss } = await faultyTenant(t, when);
    const attempts = [
      await call(service, 'PUT', '/spaces/fragile', { as: boss, json: { schemas: ['after'] } }),
      await call(service, 'DELETE', '/spaces/fragile', { as: boss }),
      await call(service, 'POST', '/spaces', { as: boss, json: { name: 'newborn' } }),
    ];
    t.deepEqual(
      attempts.map((answer) => answer.status),
      [500, 500, 500],
    );
    await assertNothingChanged(t, tenant);
  });
}

test('history is tenant data: another tenant sees none of it, even for the same name', async (t) => {
  await call(service, 'POST', '/spaces', { as: admin, json: { name: 'shared-name', schemas: ['mine'] } });
  const tenant = await newTenant(service);
  const stranger = await callerWith(service, tenant, { username: 'root', role: 'admin' });
  t.is((await history('shared-name', '', stranger)).status, 404);
  await call(service, 'POST', '/spaces', { as: stranger, json: { name: 'shared-name', schemas: ['theirs'] } });
  t.deepEqual(eventsOf(await history('shared-name', '', stranger)).map((event) => event.after), [{ schemas: ['theirs'] }]);
  t.deepEqual(eventsOf(await history('shared-name')).map((event) => event.after), [{ schemas: ['mine'] }]);
});
