import test from 'ava';
import { connectionRefused, startMain, until } from '../helpers/main-process.ts';
import { fixtureProjects } from '../helpers/projects.ts';
import { dropTestDatabase } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

const SLOW_PROJECTS = { PROJECTS_DIR: fixtureProjects('slow') };

test('SIGTERM: the request in flight completes, new connections are refused, the process exits 0', async (t) => {
  const { child, url, lines, exited } = await startMain(t, SLOW_PROJECTS);
  const inFlight = fetch(`${url}/api/slowpoke/slow?ms=1500`);
  t.true(await until(() => lines.includes('slow request started'), 5000), 'the slow handler started');

  child.kill('SIGTERM');
  t.true(await until(() => connectionRefused(url), 1000), 'new connections are refused while draining');
  t.is(child.exitCode, null, 'the process waits for the request in flight');

  const response = await inFlight;
  t.is(response.status, 200);
  t.is(await response.text(), 'finished');
  const { code, signal } = await exited;
  t.is(signal, null);
  t.is(code, 0);
  t.true(lines.some((line) => line.includes('"shutting down"')));
});
