import test from 'ava';
import { KeepAliveClient } from '../helpers/keep-alive.ts';
import { startMain } from '../helpers/main-process.ts';
import { fixtureProjects } from '../helpers/projects.ts';
import { dropTestDatabase } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

const CLIENTS = 50;
const LOAD_BEFORE_SIGNAL_MS = 1500;
const EXIT_LIMIT_MS = 10_000;
/** A database round trip and a handler that answers from a timer: both kinds of request in flight. */
const PATHS = ['/healthz', '/api/slowpoke/slow?ms=5'];

interface Tally {
  answered: number;
  /** Answers that told the client to close the connection. */
  toldToClose: number;
  /** Requests never sent: the client's new connection was refused, nothing listens any more. */
  notSent: number;
  /** Requests written to a connection that got no answer: each one a failed request. */
  lost: string[];
  unexpectedStatus: number[];
}

/** Sends request after request over one keep-alive connection, reconnecting when told to close. */
async function keepSending(url: string, tally: Tally, index: number): Promise<void> {
  const client = new KeepAliveClient(url);
  try {
    for (let sent = index; ; sent++) {
      try {
        const answer = await client.get(PATHS[sent % PATHS.length] ?? '/healthz');
        tally.answered++;
        if (answer.status !== 200) tally.unexpectedStatus.push(answer.status);
        if (answer.connection === 'close') tally.toldToClose++;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? String(error);
        if (code === 'ECONNREFUSED') {
          tally.notSent++;
          return;
        }
        tally.lost.push(code);
        return;
      }
    }
  } finally {
    client.close();
  }
}

test('SIGTERM under 50 keep-alive clients: every request sent is answered, every connection told to close, exit 0 within 10 s', async (t) => {
  const service = await startMain(t, { PROJECTS_DIR: fixtureProjects('slow') });
  const tally: Tally = { answered: 0, toldToClose: 0, notSent: 0, lost: [], unexpectedStatus: [] };
  const clients = Array.from({ length: CLIENTS }, (_, index) => keepSending(service.url, tally, index));
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
