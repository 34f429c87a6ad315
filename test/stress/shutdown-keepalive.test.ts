import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { KeepAliveClient } from '../helpers/keep-alive.ts';
import { startMain, until } from '../helpers/main-process.ts';
import { fixtureProjects } from '../helpers/projects.ts';
import { dropTestDatabase } from '../helpers/service.ts';
import { scratchFolder } from '../helpers/scratch.ts';

test.after.always(dropTestDatabase);

const CLIENTS = 50;
const LOAD_BEFORE_SIGNAL_MS = 1000;
const EXIT_LIMIT_MS = 10_000;
/** A database round trip and a handler that answers from a timer: both kinds of request in flight. */
const PATHS = ['/healthz', '/api/slowpoke/slow?ms=5'];

interface Tally {
  answered: number;
  /** The clients answered at least once: their connection is open and in use. */
  connected: Set<number>;
  /** Answers that told the client to close the connection. */
  toldToClose: number;
  /** Requests never sent: the client's new connection was refused, nothing listens any more. */
  notSent: number;
  /** Requests written to a connection that got no answer: each one a failed request. */
  lost: string[];
  unexpectedStatus: number[];
}

/** An expert file that lifts the public rate limit: the clients share one address. */
function unlimitedPublicRoutes(): string {
  const file = path.join(scratchFolder('expert'), 'expert.json');
  writeFileSync(file, JSON.stringify({ rateLimit: { public: { windowMs: 60_000, max: 1_000_000 } } }));
  return file;
}

/** Sends request after request over one keep-alive connection, reconnecting when told to close. */
async function keepSending(url: string, tally: Tally, index: number): Promise<void> {
  const client = new KeepAliveClient(url);
  try {
    for (let sent = index; ; sent++) {
      try {
        const answer = await client.get(PATHS[sent % PATHS.length] ?? '/healthz');
        tally.answered++;
        tally.connected.add(index);
        if (answer.status !== 200) tally.unexpectedStatus.push(answer.status);
        if (answer.connection === 'close') tally.toldToClose++;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? String(error);
        if (code === 'ECONNREFUSED') {
          tally.notSent++;
          return;
        }
        tally.lost.push(`${code} after ${sent - index} answers on this connection`);
        return;
      }
    }
  } finally {
    client.close();
  }
}

test('SIGTERM under 50 keep-alive clients: every request sent is answered, every connection told to close, exit 0 within 10 s', async (t) => {
  const service = await startMain(t, { PROJECTS_DIR: fixtureProjects('slow'), EXPERT_CONFIG: unlimitedPublicRoutes() });
  const tally: Tally = { answered: 0, connected: new Set(), toldToClose: 0, notSent: 0, lost: [], unexpectedStatus: [] };
  const clients = Array.from({ length: CLIENTS }, (_, index) => keepSending(service.url, tally, index));
  // A connection still being opened when the listener closes is reset by the kernel, whatever
  // the service does: the signal comes once every client has its keep-alive connection.
  t.true(await until(() => tally.connected.size === CLIENTS, 20_000), `${tally.connected.size} of ${CLIENTS} clients connected`);
  await new Promise((resolve) => setTimeout(resolve, LOAD_BEFORE_SIGNAL_MS));
  const answeredBeforeSignal = tally.answered;

  const signalled = Date.now();
  service.child.kill('SIGTERM');
  const { code, signal } = await service.exited;
  const exitMs = Date.now() - signalled;
  await Promise.all(clients);

  t.log(`${tally.answered} answered (${answeredBeforeSignal} before SIGTERM), ${tally.notSent} not sent, ${tally.lost.length} lost; exit ${code} after ${exitMs} ms`);
  t.true(answeredBeforeSignal > CLIENTS, 'the clients were sending before the signal');
  t.deepEqual(tally.lost, [], 'every request written to a connection got an answer');
  t.deepEqual(tally.unexpectedStatus, []);
  t.is(tally.toldToClose, CLIENTS, 'each connection ended with an answer saying Connection: close');
  t.is(tally.notSent, CLIENTS);
  t.is(signal, null);
  t.is(code, 0);
  t.true(exitMs < EXIT_LIMIT_MS, `exited ${exitMs} ms after SIGTERM`);
});
