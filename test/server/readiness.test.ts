import test from 'ava';
import { KeepAliveClient } from '../helpers/keep-alive.ts';
import { startMain, until } from '../helpers/main-process.ts';
import { fixtureProjects } from '../helpers/projects.ts';
import { dropTestDatabase } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

test('SIGTERM: /readyz answers 503 draining on the connection a balancer keeps, while the request in flight completes', async (t) => {
  const { child, url, lines, exited } = await startMain(t, { PROJECTS_DIR: fixtureProjects('slow') });
  // A load balancer's checks, over the connection it keeps to the instance.
  const balancer = new KeepAliveClient(url);
  t.teardown(() => balancer.close());
  const before = await balancer.get('/readyz');
  t.is(before.status, 200);
  t.deepEqual(JSON.parse(before.body), { status: 'ok' });
  const inFlight = fetch(`${url}/api/slowpoke/slow?ms=2000`);
  t.true(await until(() => lines.includes('slow request started'), 5000), 'the slow handler started');

  child.kill('SIGTERM');
  t.true(await until(() => lines.some((line) => line.includes('"shutting down"')), 2000), 'the service took the signal');
  const live = await new KeepAliveClient(url).get('/livez').catch(() => undefined);
  const after = await balancer.get('/readyz');
  t.is(after.status, 503);
  t.deepEqual(JSON.parse(after.body), { error: 'draining' });
  t.is(after.connection, 'close', 'the listener is closed: the balancer is told to reconnect elsewhere');
  t.is(live, undefined, 'new connections are refused: the listener closed at once');

  const response = await inFlight;
  t.is(response.status, 200);
  t.is(await response.text(), 'finished');
  t.deepEqual(await exited, { code: 0, signal: null });
});
