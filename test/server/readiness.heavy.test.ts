import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { KeepAliveClient } from '../helpers/keep-alive.ts';
import { startMain, until } from '../helpers/main-process.ts';
import { fixtureProjects } from '../helpers/projects.ts';
import { dropTestDatabase } from '../helpers/service.ts';
import { scratchFolder } from '../helpers/scratch.ts';

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

test('http.unreadyBeforeCloseMs: after SIGTERM the instance keeps serving that long, /readyz 503 on new connections too, then stops listening', async (t) => {
  const folder = scratchFolder('unready');
  const expert = path.join(folder, 'expert.json');
  writeFileSync(expert, JSON.stringify({ http: { unreadyBeforeCloseMs: 2500 } }));
  const { child, url, lines, exited } = await startMain(t, { PROJECTS_DIR: fixtureProjects('slow'), EXPERT_CONFIG: expert });

  child.kill('SIGTERM');
  t.true(await until(() => lines.some((line) => line.includes('"shutting down"')), 2000), 'the service took the signal');
  // A balancer that opens a connection per check is told, rather than refused.
  const ready = await fetch(`${url}/readyz`);
  t.is(ready.status, 503);
  t.deepEqual(await ready.json(), { error: 'draining' });
  const live = await fetch(`${url}/livez`);
  t.is(live.status, 200, 'a request sent before the balancer noticed is still served');

  t.true(await until(() => fetch(`${url}/livez`).then(() => false, () => true), 5000), 'then the listener closes');
  t.deepEqual(await exited, { code: 0, signal: null });
});

test('http.unreadyBeforeCloseMs is refused past 5000: the drain keeps at least 5 of the 10 s a stop may take', async (t) => {
  const folder = scratchFolder('unready');
  const expert = path.join(folder, 'expert.json');
  writeFileSync(expert, JSON.stringify({ http: { unreadyBeforeCloseMs: 6000 } }));
  const started = startMain(undefined, { EXPERT_CONFIG: expert });
  const error = await t.throwsAsync(started);
  t.regex(error.message, /exited with 1/);
});
