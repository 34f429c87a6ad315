import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { freePort } from '../../lib/dev/embedded-postgres/free-port.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { createFreshDatabase, testKnex } from '../helpers/database.ts';
import { limitHeaders } from '../helpers/http.ts';

/**
 * The comparison servers that do the service's per-request work natively must really do it,
 * or the heartbeat ratios against them compare unequal work.
 */
const SERVERS = path.resolve(import.meta.dirname, '../../bench/servers');
const HEARTBEAT = '/api/sample/heartbeat';

let databaseUrl = '';
let dropDatabase = async (): Promise<void> => {};

test.before(async () => {
  const database = await createFreshDatabase();
  dropDatabase = database.drop;
  const knex = testKnex(database.url);
  try {
    await migrateLatest(knex);
    await createTenant(knex, 'default');
  } finally {
    await knex.destroy();
  }
  databaseUrl = database.url;
});

test.after.always(() => dropDatabase());

interface RunningServer {
  readonly origin: string;
  /** Lines the server wrote to stdout so far. */
  readonly lines: string[];
}

async function startServer(t: { teardown(fn: () => Promise<void>): void }, script: string): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(SERVERS, script)], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  t.teardown(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  const lines: string[] = [];
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (pending + chunk.toString('utf8')).split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
  });
  const origin = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (await fetch(origin + HEARTBEAT, { headers: { tenant: 'ready-probe' } }).then(() => true, () => false)) return { origin, lines };
    await sleep(25);
  }
  throw new Error(`${script} did not start`);
}

async function waitForLines(server: RunningServer, count: number, counted: (line: Record<string, unknown>) => boolean): Promise<void> {
  const found = () => server.lines.filter((line) => counted(JSON.parse(line) as Record<string, unknown>)).length;
  for (let attempt = 0; attempt < 100 && found() < count; attempt += 1) await sleep(10);
}

for (const script of ['koa-native.ts', 'fastify.ts']) {
  test(`${script}: the heartbeat carries the request id and RateLimit-* headers, and logs one line`, async (t) => {
    const server = await startServer(t, script);

    const response = await fetch(server.origin + HEARTBEAT, { headers: { 'x-request-id': 'bench-check-1' } });
    t.is(response.status, 200);
    t.is(await response.text(), 'success');
    t.is(response.headers.get('x-request-id'), 'bench-check-1');
    t.like(limitHeaders(response), { limit: 1_000_000_000, reset: 60 });

    const generated = await fetch(server.origin + HEARTBEAT, { headers: { 'x-request-id': 'not a valid id' } });
    t.regex(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);

    // The readiness probes were refused (an unknown tenant) and logged too: only the answered requests count here.
    await waitForLines(server, 2, (line) => line.status === 200);
    const logged = server.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.status === 200);
    t.is(logged.length, 2);
    t.like(logged[0], { msg: 'request', method: 'GET', url: HEARTBEAT, status: 200, tenant: 'default', requestId: 'bench-check-1' });
    t.is(typeof logged[0]?.ms, 'number');
  });

  test(`${script}: an unknown tenant is refused with 400`, async (t) => {
    const server = await startServer(t, script);
    const response = await fetch(server.origin + HEARTBEAT, { headers: { tenant: 'nobody' } });
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { error: 'unknown tenant' });
  });
}
