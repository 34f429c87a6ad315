import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, rmSync, statSync } from 'node:fs';
import type { Server } from 'node:net';
import path from 'node:path';
import test from 'ava';
import { keeperSocketPath, listenAlone } from '../../../lib/dev/embedded-postgres/keeper-socket.ts';
import { until } from '../../helpers/embedded.ts';
import { scratchFolder } from '../../helpers/scratch.ts';

const folder = scratchFolder('socket');
test.after.always(() => rmSync(folder, { recursive: true, force: true }));

function close(servers: Array<Server | undefined>): Promise<unknown> {
  return Promise.all(servers.map((server) => server && new Promise((resolve) => server.close(resolve))));
}

/** A socket file whose listener was killed: what a keeper killed with SIGKILL leaves behind. */
async function staleSocket(socketPath: string): Promise<void> {
  const script = `require('node:net').createServer().listen(${JSON.stringify(socketPath)}, () => process.stdout.write('up'))`;
  const holder = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(holder.stdout, 'data');
  holder.kill('SIGKILL');
  await once(holder, 'exit');
}

test('the socket lives in the data folder, open to its owner alone', async (t) => {
  const socketPath = keeperSocketPath(folder);
  t.is(path.dirname(socketPath), folder);
  const server = await listenAlone(socketPath);
  t.teardown(() => close([server]));
  t.truthy(server);
  t.true(lstatSync(socketPath).isSocket());
  t.is(statSync(socketPath).mode & 0o777, 0o600);
});

test('a data folder too deep for a socket path gets one in a private runtime folder', (t) => {
  const deep = path.join(folder, 'd'.repeat(120));
  const socketPath = keeperSocketPath(deep);
  t.true(Buffer.byteLength(socketPath) <= 100, socketPath);
  t.is(statSync(path.dirname(socketPath)).mode & 0o077, 0, 'no one else may enter its folder');
  t.is(keeperSocketPath(deep), socketPath, 'the same folder always gets the same socket');
  t.not(keeperSocketPath(`${deep}x`), socketPath);
});

test('of keepers starting at once, exactly one listens; the others find it', async (t) => {
  const socketPath = path.join(folder, 'at-once.sock');
  const servers = await Promise.all([1, 2, 3, 4].map(() => listenAlone(socketPath)));
  t.teardown(() => close(servers));
  t.is(servers.filter(Boolean).length, 1);
});

test('a socket file left by a killed keeper is taken over by exactly one of the keepers starting', async (t) => {
  const socketPath = path.join(folder, 'stale.sock');
  await staleSocket(socketPath);
  t.true(existsSync(socketPath), 'the killed listener left its socket file');
  const servers = await Promise.all([1, 2, 3, 4].map(() => listenAlone(socketPath)));
  t.teardown(() => close(servers));
  t.is(servers.filter(Boolean).length, 1);
  t.false(existsSync(`${socketPath}.lock`), 'the lock is released');
  await close(servers);
  t.true(await until(() => !existsSync(socketPath), 1000), 'closing removes the socket file');
});
