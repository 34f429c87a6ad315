import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl } from '../helpers/service.ts';
import { fixtureProjects } from '../helpers/projects.ts';

test.after.always(dropTestDatabase);

/** Starts `node lib/main.ts` and resolves with its URL once it listens; stdout lines go to `lines`. */
async function startMain(lines: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['lib/main.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: await testDatabaseUrl(),
      JWT_SECRET: TEST_JWT_SECRET,
      PROJECTS_DIR: fixtureProjects('slow'),
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'spaceport-h4-shutdown-')),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const output = child.stdout;
  if (output === null) throw new Error('the service was started without a stdout pipe');
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: output }).on('line', (line) => {
      lines.push(line);
      const entry = line.startsWith('{') ? (JSON.parse(line) as { msg?: string; url?: string }) : {};
      if (entry.msg === 'spaceport listening' && entry.url) resolve(entry.url);
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code} before listening`)));
  });
  return { child, url };
}

function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

async function until(condition: () => boolean | Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

test('SIGTERM: the request in flight completes, new connections are refused, the process exits 0', async (t) => {
  const lines: string[] = [];
  const { child, url } = await startMain(lines);
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const inFlight = fetch(`${url}/api/slowpoke/slow?ms=1500`);
  t.true(await until(() => lines.includes('slow request started'), 5000), 'the slow handler started');

  child.kill('SIGTERM');
  t.true(await until(() => connectionRefused(url), 1000), 'new connections are refused while draining');
  t.is(child.exitCode, null, 'the process waits for the request in flight');

  const response = await inFlight;
  t.is(response.status, 200);
  t.is(await response.text(), 'finished');
  const [code, signal] = await exited;
  t.is(signal, null);
  t.is(code, 0);
  t.true(lines.some((line) => line.includes('"shutting down"')));
});

test('a rejected promise a handler left floating is logged and the service keeps serving', async (t) => {
  const lines: string[] = [];
  const { child, url } = await startMain(lines);
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const response = await fetch(`${url}/api/slowpoke/floating-rejection`);
  t.is(await response.text(), 'answered');
  t.true(await until(() => lines.some((line) => line.includes('"unhandled promise rejection"')), 5000));
  t.true(lines.some((line) => line.includes('floating rejection')), 'the log line carries the error');
  const health = await fetch(`${url}/healthz`);
  t.is(health.status, 200);
  t.is(child.exitCode, null);
});

test('an uncaught exception lets the request in flight finish, then exits 1', async (t) => {
  const lines: string[] = [];
  const { child, url } = await startMain(lines);
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const inFlight = fetch(`${url}/api/slowpoke/slow?ms=1000`);
  t.true(await until(() => lines.includes('slow request started'), 5000), 'the slow handler started');
  t.is(await (await fetch(`${url}/api/slowpoke/timer-throw`)).text(), 'answered');

  const response = await inFlight;
  t.is(response.status, 200);
  t.is(await response.text(), 'finished');
  const [code] = await exited;
  t.is(code, 1);
  t.true(lines.some((line) => line.includes('"uncaught exception"') && line.includes('thrown from a timer')));
});
