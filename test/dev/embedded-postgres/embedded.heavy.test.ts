import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import pg from 'pg';
import { openEmbeddedDatabase } from '../../../lib/dev/embedded-postgres/index.ts';
import { keeperSocketPath } from '../../../lib/dev/embedded-postgres/keeper-socket.ts';
import { freePort } from '../../../lib/dev/embedded-postgres/free-port.ts';
import {
  embeddedEnvironment,
  keeperPid,
  killLeftovers,
  postmasterPid,
  processesMentioning,
  processGone,
  removeDataDir,
  startEmbeddedService,
  startOrphanServer,
  stopService,
  temporaryDataDir,
  until,
} from '../../helpers/embedded.ts';
import { TEST_JWT_SECRET } from '../../helpers/service.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const NODE = path.join(ROOT, 'node_modules/.bin/node');
const run = promisify(execFile);

// One data folder for the file: initialised once, by the first start.
const dataDir = temporaryDataDir();
test.afterEach.always(() => killLeftovers(dataDir));
test.after.always(() => removeDataDir(dataDir));

test.serial('killed with SIGKILL, the service leaves no PostgreSQL and no helper process running', async (t) => {
  const service = await startEmbeddedService(t, dataDir);
  const pid = postmasterPid(dataDir);
  if (pid === undefined) return t.fail('no postmaster.pid after start-up');
  const killedAt = Date.now();
  service.child.kill('SIGKILL');
  await service.exited;
  t.true(await until(() => processGone(pid), 5000), 'PostgreSQL is gone within 5 s');
  t.log(`PostgreSQL gone ${Date.now() - killedAt} ms after the SIGKILL`);
  t.true(await until(() => processesMentioning(dataDir).length === 0, 5000), 'nothing is left running on the data folder');
});

test.serial('a start that finds a server left running on its data folder stops it and says so in one line', async (t) => {
  await stopService(await startEmbeddedService(t, dataDir)); // the data folder exists and is initialised
  const orphan = await startOrphanServer(dataDir, await freePort());
  const service = await startEmbeddedService(t, dataDir);
  const notices = service.lines.filter((line) => line.includes('left running'));
  t.is(notices.length, 1, service.lines.join('\n'));
  t.true(notices[0]?.includes(`pid ${orphan}`), notices[0]);
  t.true(processGone(orphan), 'the orphaned server was stopped');
  t.is((await fetch(`${service.url}/healthz`)).status, 200);
  t.deepEqual(await stopService(service), [0, null]);
  t.true(await until(() => processesMentioning(dataDir).length === 0, 5000), 'nothing is left running after SIGTERM');
});

test.serial('a second service joined to the server keeps answering when the one that started it stops', async (t) => {
  const first = await startEmbeddedService(t, dataDir);
  const second = await startEmbeddedService(t, dataDir);
  const pid = postmasterPid(dataDir);
  t.deepEqual(await stopService(first), [0, null]);
  t.is((await fetch(`${second.url}/healthz`)).status, 200, 'the joined service still reaches its database');
  t.is(postmasterPid(dataDir), pid, 'the same server goes on');
  t.deepEqual(await stopService(second), [0, null]);
  t.true(await until(() => processesMentioning(dataDir).length === 0, 5000), 'the last one out stops the server');
});

test.serial('a command run while the service is up joins its server and leaves it running', async (t) => {
  const service = await startEmbeddedService(t, dataDir);
  const pid = postmasterPid(dataDir);
  const { stdout } = await run(NODE, ['lib/cli/main.ts', 'tenant', 'acme'], { cwd: ROOT, env: embeddedEnvironment(dataDir) });
  t.regex(stdout, /acme/);
  t.is(postmasterPid(dataDir), pid);
  t.is((await fetch(`${service.url}/healthz`)).status, 200);
  t.deepEqual(await stopService(service), [0, null]);
});

test.serial('a server stopped by hand (the README command) is reported in one line', async (t) => {
  const service = await startEmbeddedService(t, dataDir);
  await run('sh', ['-c', 'kill -INT "$(head -1 "$DATA_DIR"/postgres/postmaster.pid)"'], { env: embeddedEnvironment(dataDir) });
  t.true(await until(() => service.lines.some((line) => line.includes('embedded PostgreSQL stopped')), 5000), service.lines.join('\n'));
  t.is(service.lines.filter((line) => line.includes('embedded PostgreSQL stopped')).length, 1);
  t.is((await fetch(`${service.url}/healthz`)).status, 503);
  t.deepEqual(await stopService(service), [0, null]);
  t.true(await until(() => processesMentioning(dataDir).length === 0, 5000));
});

test.serial('a keeper killed with SIGKILL takes its server down with it, and the service says so in one line', async (t) => {
  const service = await startEmbeddedService(t, dataDir);
  const pid = postmasterPid(dataDir);
  const keeper = keeperPid(dataDir);
  if (pid === undefined || keeper === undefined) return t.fail('no server or no keeper after start-up');
  process.kill(keeper, 'SIGKILL');
  t.true(await until(() => processGone(pid), 5000), 'PostgreSQL is gone within 5 s');
  t.true(await until(() => service.lines.some((line) => line.includes('embedded PostgreSQL stopped')), 5000), service.lines.join('\n'));
  t.is((await fetch(`${service.url}/healthz`)).status, 503);
  t.deepEqual(await stopService(service), [0, null]);

  t.true(existsSync(keeperSocketPath(dataDir)), 'the killed keeper left its socket file');
  const next = await startEmbeddedService(t, dataDir);
  t.is((await fetch(`${next.url}/healthz`)).status, 200, 'the next start takes the socket over');
  t.deepEqual(await stopService(next), [0, null]);
});

test.serial('processes starting at once on a new data folder all get the one server', async (t) => {
  const freshDir = temporaryDataDir();
  t.teardown(() => {
    killLeftovers(freshDir);
    removeDataDir(freshDir);
  });
  const databases = await Promise.all([1, 2, 3].map(() => openEmbeddedDatabase(freshDir)));
  t.is(new Set(databases.map((database) => database.url)).size, 1);
  const client = new pg.Client(databases[0]?.url);
  await client.connect();
  t.deepEqual((await client.query('select 1 as one')).rows, [{ one: 1 }]);
  await client.end();
  const pid = postmasterPid(freshDir);
  await Promise.all(databases.map((database) => database.stop()));
  t.true(pid !== undefined && processGone(pid), 'stopped once the last one let go');
  t.true(await until(() => processesMentioning(freshDir).length === 0, 5000));
});

test.serial('no secret of the service\'s environment reaches the keeper or the server', async (t) => {
  const service = await startEmbeddedService(t, dataDir);
  const pids = [keeperPid(dataDir), postmasterPid(dataDir)];
  for (const pid of pids) {
    if (pid === undefined) return t.fail('no keeper or no server');
    const environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
    t.false(environment.includes(TEST_JWT_SECRET), `pid ${pid} was given the JWT secret`);
    t.false(environment.includes('JWT_SECRET'));
  }
  t.deepEqual(await stopService(service), [0, null]);
});

test.serial('with-database.ts, run alone, starts the server for its command and stops it after', async (t) => {
  const script = 'process.stdout.write(new URL(process.env.DATABASE_URL).port)';
  const { stdout } = await run(NODE, ['lib/cli/with-database.ts', '--', NODE, '-e', script], { cwd: ROOT, env: embeddedEnvironment(dataDir) });
  t.regex(stdout, /^\d+$/);
  t.true(await until(() => processesMentioning(dataDir).length === 0, 5000));
});
