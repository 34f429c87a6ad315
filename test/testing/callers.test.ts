import test from 'ava';
import path from 'node:path';
import { start, type TestService } from '../../lib/testing/index.ts';
import { json, writeTree } from '../helpers/projects.ts';

// Issue 37, point 7: every request of a test file comes from 127.0.0.1 in the test's tenant, so
// a `by: 'ip'` limit spent by one test answered 429 to the next. A caller of its own has its
// own budget.
const ROUTES = `export default [
  { method: 'GET', path: '/quote', skipAuth: true, rateLimit: { max: 2, windowMs: 60000, by: 'ip' }, function: (req, res) => res.json({ tenant: req.get('tenant') }) },
  { method: 'GET', path: '/mine', rateLimit: { max: 1, windowMs: 60000, by: 'user' }, function: (req, res) => res.json({ uid: req.uid, tenant: req.get('tenant') }) },
];`;

let app: TestService;
test.before(async () => {
  app = await start({ project: path.join(writeTree({ 'shop/api/routes.js': ROUTES }), 'shop') });
});
test.after.always(() => app?.close());

test('a caller of its own gets its own budget of a limit by address, in a tenant of its own', async (t) => {
  const statuses = [];
  for (let sent = 0; sent < 3; sent += 1) statuses.push((await app.get('/api/shop/quote')).status);
  t.deepEqual(statuses, [200, 200, 429], "the test's own budget is spent");

  const caller = await app.caller();
  t.not(caller.tenant, app.tenant);
  const answer = await caller.get('/api/shop/quote');
  t.is(answer.status, 200);
  t.deepEqual(await json(answer), { tenant: caller.tenant });
  const other = await app.caller();
  t.not(other.tenant, caller.tenant, 'each caller is new');
});

test('its user is its own too, in its tenant, for a limit by user', async (t) => {
  const caller = await app.caller({ tenant: 'acme' });
  t.is(caller.tenant, 'acme');
  t.is(caller.user.tenant, 'acme');
  t.deepEqual(await json(await caller.get('/api/shop/mine', { as: caller.user })), { uid: caller.user.uid, tenant: 'acme' });
  t.is((await caller.get('/api/shop/mine', { as: caller.user })).status, 429);
  const second = await app.caller({ tenant: 'acme' });
  t.is((await second.get('/api/shop/mine', { as: second.user })).status, 200, 'another user of the same tenant');
});
