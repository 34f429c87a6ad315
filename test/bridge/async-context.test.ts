import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import { MOUNT, startBridgeApp, startExpressApp, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { FIXTURES } from '../helpers/bridge-cases.ts';
import { json, writeTree } from '../helpers/projects.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

/**
 * The async context `next` carries (issue 14): Express calls the next function from inside
 * `next`, so a store a custom auth enters with `als.run(store, next)` is seen by the handler and
 * by the callbacks of its `sendFile`/`download`. The service's own tenant context is the one
 * thing `next` does not carry: the rest of the chain keeps the request's tenant.
 */
const context = new AsyncLocalStorage<{ who: string }>();
const HELLO = path.join(FIXTURES, 'hello.txt');

function fileCallbackRoutes(seen: unknown[]): RouteCase[] {
  const enterStore: RouteHandler = (_req, _res, next) => context.run({ who: 'auth' }, next);
  const record = () => seen.push(context.getStore() ?? null);
  return [
    { method: 'get', path: '/send-file', handlers: [enterStore, (_req, res) => res.sendFile(HELLO, record)] },
    { method: 'get', path: '/download', handlers: [enterStore, (_req, res) => res.download(HELLO, 'hello.txt', record)] },
  ];
}

async function storeSeenByCallback(start: (routes: RouteCase[]) => Promise<RunningApp>, pathname: string): Promise<unknown> {
  const seen: unknown[] = [];
  const app = await start(fileCallbackRoutes(seen));
  try {
    const response = await fetch(`${app.url}${MOUNT}${pathname}`);
    await response.text();
    while (seen.length === 0) await delay(5);
    return seen[0];
  } finally {
    await app.close();
  }
}

for (const pathname of ['/send-file', '/download']) {
  test(`the ${pathname.slice(1)} callback after a whole file sees the store entered around next(), as in Express`, async (t) => {
    const expected = await storeSeenByCallback((routes) => startExpressApp(routes), pathname);
    t.deepEqual(expected, { who: 'auth' }, 'Express');
    t.deepEqual(await storeSeenByCallback((routes) => startBridgeApp(routes), pathname), expected);
  });
}

/**
 * `/waiting` holds its request in a custom auth until `/opening` emits `open`, so its `next()`
 * runs in the context of the other request (another tenant): the handler must still act for its
 * own tenant, which `signToken` reads from the context, while seeing the store its auth entered.
 */
const ROUTES = `import { EventEmitter } from 'node:events';
import { AsyncLocalStorage } from 'node:async_hooks';
import { signToken, verifyToken } from 'spaceport';

const gate = new EventEmitter();
const context = new AsyncLocalStorage();

export default [
  {
    method: 'GET',
    path: '/waiting',
    auth: (req, res, next) => gate.once('open', () => context.run({ who: 'auth' }, next)),
    function: async (req, res) => {
      const claims = verifyToken(await signToken({ uid: 'u-1', username: 'u', role: 'member' }));
      res.json({ tenantOfContext: claims.tenant, tenantOfRequest: req.headers.tenant, store: context.getStore() ?? null });
    },
  },
  { method: 'GET', path: '/opening', skipAuth: true, function: (req, res) => res.json({ opened: gate.emit('open') }) },
];
`;

let service: ServiceUnderTest;
serviceForFile({ tenants: ['acme'], env: { PROJECTS_DIR: path.join(writeTree({ 'projects/gate/api/routes.js': ROUTES }), 'projects') } }, (started) => {
  service = started;
});

test('next() called from another tenant\'s request keeps this request\'s tenant, and still carries the store', async (t) => {
  const waiting = service.fetch('/api/gate/waiting', { headers: { tenant: 'acme' } });
  let opened = false;
  while (!opened) {
    await delay(10);
    opened = (await json(await service.fetch('/api/gate/opening'))).opened === true;
  }
  const response = await waiting;
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { tenantOfContext: 'acme', tenantOfRequest: 'acme', store: { who: 'auth' } });
});
