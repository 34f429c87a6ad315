import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import test, { type ExecutionContext } from 'ava';
import { DRAIN_TIMING } from '../../lib/http/drain.ts';
import { releaseHeld, requestHeld } from '../fixtures/projects/slow/slowpoke/held.ts';
import { KeepAliveClient } from '../helpers/keep-alive.ts';
import { fixtureProjects } from '../helpers/projects.ts';
import { dropTestDatabase, startTestService, type ServiceUnderTest } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

/** Closed after the test too, in case it failed before closing it (close() runs once). */
function startSlowService(t: ExecutionContext): Promise<ServiceUnderTest> {
  return startTestService(t, { env: { PROJECTS_DIR: fixtureProjects('slow') } });
}

/** A connection that has answered once and now sits idle in the client's pool. */
async function idleClient(t: ExecutionContext, service: ServiceUnderTest): Promise<KeepAliveClient> {
  const client = new KeepAliveClient(service.url);
  t.teardown(() => client.close());
  const first = await client.get('/healthz');
  if (first.connection !== 'keep-alive') throw new Error(`expected a keep-alive answer, got ${first.connection}`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  return client;
}

async function until(condition: () => boolean, limitMs: number): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (condition()) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return undefined;
}

test('a request sent on an idle keep-alive connection just after close begins is answered', async (t) => {
  const service = await startSlowService(t);
  const client = await idleClient(t, service);
  const closed = service.close();
  const answer = await client.get('/healthz');
  t.is(answer.status, 200);
  t.deepEqual(JSON.parse(answer.body), { status: 'ok' });
  await closed;
});

/** Resolves once a new connection to `url` is refused: the listener is closed. */
async function listenerClosed(url: string): Promise<void> {
  for (;;) {
    const refused = await fetch(`${url}/healthz`, { headers: { connection: 'close' } }).then(
      () => false,
      () => true,
    );
    if (refused) return;
  }
}

test('once the listener is closed, a request on an idle keep-alive connection is answered with Connection: close', async (t) => {
  const service = await startSlowService(t);
  const client = await idleClient(t, service);
  const closed = service.close();
  await listenerClosed(service.url);
  const answer = await client.get('/healthz');
  t.is(answer.status, 200);
  t.is(answer.connection, 'close');
  await closed;
});

/**
 * A client on a thread of its own connects and sends its request while this thread (the
 * service's) is blocked: the connection then waits in the kernel's accept queue, completed but
 * not yet accepted, when close begins, as connections do when the event loop is busy.
 */
const QUEUED_CLIENT = `
  const { workerData, parentPort } = require('node:worker_threads');
  const { connect } = require('node:net');
  const signal = new Int32Array(workerData.signal);
  const socket = connect(workerData.port, '127.0.0.1', () => {
    socket.write('GET /healthz HTTP/1.1\\r\\nHost: test\\r\\n\\r\\n', () => {
      Atomics.store(signal, 0, 1);
      Atomics.notify(signal, 0);
    });
  });
  let answer = '';
  socket.on('data', (chunk) => { answer += chunk; });
  socket.on('close', () => parentPort.postMessage(answer));
  socket.on('error', (error) => parentPort.postMessage('error: ' + error.code));
`;

test('a connection the kernel completed just before close begins is served, not reset with the listener', async (t) => {
  const service = await startSlowService(t);
  const signal = new SharedArrayBuffer(4);
  const client = new Worker(QUEUED_CLIENT, { eval: true, workerData: { port: Number(new URL(service.url).port), signal } });
  t.teardown(() => client.terminate());
  await once(client, 'online');
  // Blocks this thread until the request is on the wire: nothing here accepts it meanwhile.
  t.not(Atomics.wait(new Int32Array(signal), 0, 0, 60_000), 'timed-out', 'the request is on the wire');
  const closed = service.close();
  const [answer] = (await once(client, 'message')) as [string];
  t.regex(answer, /^HTTP\/1\.1 200 /);
  await closed;
});

test('the answer to a request in flight when close begins, given once the listener is closed, carries Connection: close', async (t) => {
  const service = await startSlowService(t);
  const client = await idleClient(t, service);
  const inFlight = client.get('/api/slowpoke/held');
  await requestHeld();
  const closed = service.close();
  await listenerClosed(service.url);
  releaseHeld();
  const answer = await inFlight;
  t.is(answer.status, 200);
  t.is(answer.body, 'finished');
  t.is(answer.connection, 'close');
  await closed;
});

test('an idle connection is closed only after a grace period, then close() resolves', async (t) => {
  const service = await startSlowService(t);
  const client = await idleClient(t, service);
  const started = Date.now();
  let closedAfter = 0;
  const closed = service.close().then(() => {
    closedAfter = Date.now() - started;
  });
  // Timers never fire early, however busy the machine: closed before the limit, it was not the limit that closed it.
  const droppedAfter = await until(() => client.openConnections() === 0, DRAIN_TIMING.limitMs);
  t.not(droppedAfter, undefined, 'the idle connection was closed');
  t.true((droppedAfter ?? 0) >= 800, `the idle connection was closed after ${droppedAfter} ms, before the grace period`);
  await closed;
  t.true(closedAfter < DRAIN_TIMING.limitMs, `close() took ${closedAfter} ms: it waited for the limit`);
});

test('close() twice drains once', async (t) => {
  const service = await startSlowService(t);
  await Promise.all([service.close(), service.close()]);
  t.pass();
});
