import test from 'ava';
import { instanceLine, shortRequestLine } from '../../lib/cli/dev/log-lines.ts';
import { projectRouteLines } from '../../lib/cli/dev/mounted-routes.ts';

test('make dev prints a request on one line: its fields are folded into the message', (t) => {
  const line = JSON.stringify({ level: 30, time: 1, pid: 7, hostname: 'h', msg: 'request', method: 'GET', url: '/api/shop/orders', status: 200, ms: 3.1, tenant: 'default', reqId: 'r1', route: 'GET /orders' });
  t.deepEqual(JSON.parse(shortRequestLine(line)), {
    level: 30,
    time: 1,
    pid: 7,
    hostname: 'h',
    msg: 'GET /api/shop/orders 200 3.1 ms tenant=default reqId=r1 route="GET /orders"',
  });
});

test('make dev leaves every other line as it is', (t) => {
  const line = JSON.stringify({ level: 50, msg: 'handler failed', error: 'boom' });
  t.is(shortRequestLine(line), line);
});

test("make dev says an instance's own listening line is the internal instance behind its address", (t) => {
  const line = JSON.stringify({ level: 30, time: 1, pid: 7, hostname: 'h', url: 'http://127.0.0.1:35281', msg: 'spaceport listening' });
  t.deepEqual(JSON.parse(instanceLine(line)), {
    level: 30,
    time: 1,
    pid: 7,
    hostname: 'h',
    msg: "internal instance listening on http://127.0.0.1:35281 (make dev's own address forwards to it)",
  });
});

test('make dev shortens request lines and leaves the others as they are, through instanceLine too', (t) => {
  const request = JSON.stringify({ level: 30, msg: 'request', method: 'GET', url: '/x', status: 200, ms: 1 });
  t.is(JSON.parse(instanceLine(request)).msg, 'GET /x 200 1 ms');
  const other = JSON.stringify({ level: 50, msg: 'handler failed', error: 'boom' });
  t.is(instanceLine(other), other);
});

test("make dev's route list shows a route's own rate limit, as make routes does", (t) => {
  const paths = {
    '/healthz': { get: { 'x-spaceport-auth': 'public' } },
    '/api/helpdesk/reports/summary': { get: { 'x-spaceport-auth': 'system', 'x-spaceport-rate-limit': { max: 5, windowMs: 60000, by: 'user' as const } } },
    '/api/helpdesk/tickets/{id}': { put: { 'x-spaceport-auth': 'system' }, delete: {} },
    '/api/project/reports/summary': { get: { 'x-spaceport-auth': 'system' } },
  };
  t.deepEqual(projectRouteLines(paths), [
    'GET /api/helpdesk/reports/summary (system, 5/60s by user)',
    'PUT /api/helpdesk/tickets/{id} (system)',
    'DELETE /api/helpdesk/tickets/{id} (system)',
  ]);
});
