import path from 'node:path';
import test from 'ava';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { json, startWithProjects, writeTree } from '../helpers/projects.ts';

/**
 * Regressions in how declared paths match URLs and fill `req.params`, checked through the real
 * service: each case once answered differently from an Express router mounted at the project.
 */
const ROUTES = `
const answer = (req, res) => res.json({ path: req.path, params: req.params });
export default [
  { method: 'GET', path: '/declared-with-slash/', skipAuth: true, function: answer },
  { method: 'GET', path: '/orders/:id;edit', skipAuth: true, function: (req, res) => res.json({ action: 'edit', id: req.params.id }) },
  { method: 'GET', path: '/orders/:id;view', skipAuth: true, function: (req, res) => res.json({ action: 'view', id: req.params.id }) },
  { method: 'GET', path: '/tree/*rest', skipAuth: true, function: answer },
  { method: 'GET', path: '/private/:id', function: answer },
  { method: 'POST', path: '/orders/draft', skipAuth: true, function: (req, res, next) => next() },
  { method: 'POST', path: '/orders/:id', skipAuth: true, function: (req, res) => res.json({ id: req.params.id, body: req.body }) },
];
`;

let service: ServiceUnderTest;
test.before(async () => {
  const root = writeTree({ 'projects/shop/api/routes.js': ROUTES }, 'rb-matching');
  service = await startWithProjects(undefined, path.join(root, 'projects'));
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

test('a path declared with a trailing slash answers without it too, as in Express', async (t) => {
  for (const url of ['/api/shop/declared-with-slash', '/api/shop/declared-with-slash/', '/api/project/DECLARED-WITH-SLASH']) {
    const response = await service.fetch(url);
    t.is(response.status, 200, url);
  }
  t.like(await json(await service.fetch('/api/shop/declared-with-slash')), { path: '/declared-with-slash' });
});

test('paths that differ only after a parameter are distinct routes, not duplicates', async (t) => {
  t.deepEqual(await json(await service.fetch('/api/shop/orders/7;edit')), { action: 'edit', id: '7' });
  t.deepEqual(await json(await service.fetch('/api/shop/orders/7;view')), { action: 'view', id: '7' });
});

test('a wildcard parameter is the array of its decoded segments, as in Express 5', async (t) => {
  const body = await json(await service.fetch('/api/shop/tree/a/b%20c/%2F'));
  t.deepEqual(body, { path: '/tree/a/b%20c/%2F', params: { rest: ['a', 'b c', '/'] } });
});

test('a parameter with a bad escape is 400, as Express decides before any step of the route', async (t) => {
  for (const url of ['/api/shop/tree/%E0%A4%A', '/api/shop/private/%zz']) {
    const response = await service.fetch(url);
    t.is(response.status, 400, url);
    t.deepEqual(Object.keys(await json(response)), ['error'], url);
  }
});

test('a body handed on with next() reaches the next matching route intact', async (t) => {
  const sent = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"items":[1,2]}' };
  const response = await service.fetch('/api/shop/orders/draft', sent);
  t.is(response.status, 200);
  t.deepEqual(await json(response), { id: 'draft', body: { items: [1, 2] } });
});
