import test from 'ava';
import { shortRequestLine } from '../../lib/cli/dev/log-lines.ts';

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
