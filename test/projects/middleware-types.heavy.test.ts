import test from 'ava';
import { cli } from '../helpers/cli.ts';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { fixtureProjects, json, migrateFileDatabase, startWithProjects, tokenFor } from '../helpers/projects.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

// Issue 37, point 2: `middleware: [helmet()]`, as the guide writes it, failed `make check`
// (its function is typed for Node's IncomingMessage, not the route's Request).
const TYPED_MIDDLEWARE = fixtureProjects('typed-middleware');

test("middleware typed for Node's or Express's request passes the projects' type check as written", async (t) => {
  const { code, stdout, stderr } = await cli(['check-projects'], await testDatabaseUrl(), { PROJECTS_DIR: TYPED_MIDDLEWARE });
  t.is(code, 0, stdout + stderr);
  t.is(stdout.trim(), `checked 1 project(s) in ${TYPED_MIDDLEWARE}`);
});

test('and the service runs it', async (t) => {
  const service = await startWithProjects(t, TYPED_MIDDLEWARE);
  const headers = { authorization: `Bearer ${await tokenFor(service)}`, 'content-type': 'application/json', cookie: 'basket=3' };
  const created = await service.fetch('/api/orders/orders', { method: 'POST', headers, body: '{"amount": 2}' });
  t.is(created.status, 201);
  t.is(created.headers.get('x-content-type-options'), 'nosniff', "helmet's header");
  t.deepEqual(await json(created), { received: { amount: 2 }, cookies: { basket: '3' } });
  const refused = await service.fetch('/api/orders/orders', { method: 'POST', headers, body: '{"amount": 0}' });
  t.is(refused.status, 400, "express-validator's check");
});
