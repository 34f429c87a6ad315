import test from 'ava';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { BridgeResponse } from '../../lib/bridge/index.ts';
import { logEntries, MOUNT, startBridgeApp, startExpressApp, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * `res.write`, `res.end` and `readable.pipe(res)` (SPEC §10.3): large bodies arrive whole and
 * identical to Express's; a client that leaves mid-stream costs nothing (the handler hears
 * `close`, a piped source is destroyed) and a failing source cuts the response.
 */
const CHUNK = Buffer.alloc(64 * 1024, 'spaceport ');
const LARGE_CHUNKS = 128; // 8 MiB

/** Writes `count` chunks, waiting for `drain` as a well-behaved producer does. */
async function writeChunks(res: BridgeResponse, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    if (!res.write(CHUNK)) await once(res, 'drain');
  }
  res.end();
}

function endlessSource(): Readable {
  return new Readable({ read() { this.push(CHUNK); } });
}

const observed = { closeHeard: false, writeAfterClose: undefined as boolean | undefined, sourceDestroyed: false, fileError: '', lateFileError: '' };

const bigFile = path.join(scratchFolder('h3-streams'), 'big.bin');
writeFileSync(bigFile, Buffer.alloc(CHUNK.length * LARGE_CHUNKS, 7));

const routes: RouteCase[] = [
  { method: 'get', path: '/written', handlers: [(_req, res) => writeChunks(res, LARGE_CHUNKS)] },
  {
    method: 'get',
    path: '/piped',
    handlers: [(_req, res) => Readable.from((function* () { for (let index = 0; index < LARGE_CHUNKS; index++) yield CHUNK; })()).pipe(res as unknown as NodeJS.WritableStream)],
  },
  {
    method: 'get',
    path: '/forever-written',
    handlers: [
      (_req, res) => {
        const timer = setInterval(() => res.write(CHUNK), 5);
        res.on('close', () => {
          clearInterval(timer);
          observed.closeHeard = true;
          observed.writeAfterClose = res.write(CHUNK);
        });
      },
    ],
  },
  {
    method: 'get',
    path: '/forever-piped',
    handlers: [
      (_req, res) => {
        const source = endlessSource();
        source.on('close', () => (observed.sourceDestroyed = source.destroyed));
        source.pipe(res as unknown as NodeJS.WritableStream);
      },
    ],
  },
  {
    method: 'get',
    path: '/failing-source',
    handlers: [
      (_req, res) => {
        let sent = 0;
        const source = new Readable({
          read() {
            if (sent++ < 3) this.push(CHUNK);
            else this.destroy(new Error('the disk went away'));
          },
        });
        source.pipe(res as unknown as NodeJS.WritableStream);
      },
    ],
  },
  {
    method: 'get',
    path: '/big-file',
    handlers: [
      (_req, res) =>
        res.sendFile(bigFile, (error) => {
          observed.fileError = (error as NodeJS.ErrnoException | undefined)?.code ?? 'none';
        }),
    ],
  },
  {
    method: 'get',
    path: '/file-after-leaving',
    handlers: [
      (_req, res) =>
        void res.on('close', () =>
          setTimeout(() =>
            res.sendFile(bigFile, (error) => {
              observed.lateFileError = (error as NodeJS.ErrnoException | undefined)?.code ?? 'none';
            }),
          100),
        ),
    ],
  },
  { method: 'get', path: '/ping', handlers: [(_req, res) => res.send('pong')] },
  ...failuresAfterAWrite(),
];

/** Handlers that write part of an answer, then fail: each way a handler can fail. */
function failuresAfterAWrite(): RouteCase[] {
  const failing = (pathname: string, fail: (res: BridgeResponse, next: (error: unknown) => void) => unknown): RouteCase => ({
    method: 'get',
    path: pathname,
    handlers: [(_req, res, next) => {
      res.write('partial');
      return fail(res, next);
    }],
  });
  return [
    failing('/write-then-throw', () => {
      throw new Error('after the headers');
    }),
    failing('/write-then-reject', async () => {
      await delay(10);
      throw new Error('after the headers, later');
    }),
    failing('/write-then-next-error', (_res, next) => setTimeout(() => next(new Error('passed on after the headers')), 10)),
  ];
}

let bridge: RunningApp;
let express: RunningApp;
test.before(async () => {
  [bridge, express] = await Promise.all([startBridgeApp(routes), startExpressApp(routes)]);
});
test.after.always(async () => {
  await Promise.all([bridge?.close(), express?.close()]);
  rmSync(path.dirname(bigFile), { recursive: true, force: true });
});

async function digestOf(app: RunningApp, pathname: string): Promise<{ status: number; type: string | null; bytes: number; sha: string }> {
  const response = await fetch(`${app.url}${MOUNT}${pathname}`);
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, type: response.headers.get('content-type'), bytes: body.length, sha: createHash('sha256').update(body).digest('hex') };
}

for (const pathname of ['/written', '/piped', '/big-file']) {
  test(`a large body (${pathname}) arrives whole, as from Express`, async (t) => {
    const [actual, expected] = await Promise.all([digestOf(bridge, pathname), digestOf(express, pathname)]);
    t.is(actual.bytes, CHUNK.length * LARGE_CHUNKS);
    t.deepEqual(actual, expected);
  });
}

/** Reads the first bytes of a streamed answer, then drops the connection. */
async function leaveMidStream(pathname: string): Promise<void> {
  const { hostname, port } = new URL(bridge.url);
  const outgoing = request({ hostname, port, path: `${MOUNT}${pathname}` });
  outgoing.end();
  const [response] = (await once(outgoing, 'response')) as [NodeJS.ReadableStream];
  await once(response, 'data');
  outgoing.destroy();
}

/** Sends a request to `app`, waits a moment without an answer, then drops the connection. */
async function leaveBeforeAnswer(app: RunningApp, pathname: string): Promise<void> {
  const { hostname, port } = new URL(app.url);
  const outgoing = request({ hostname, port, path: `${MOUNT}${pathname}` });
  outgoing.on('error', () => {});
  outgoing.end();
  await delay(200);
  outgoing.destroy();
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await delay(10);
}

test('a client leaving mid-stream: the handler hears close, later writes are refused quietly', async (t) => {
  await leaveMidStream('/forever-written');
  await until(() => observed.closeHeard);
  t.true(observed.closeHeard);
  t.false(observed.writeAfterClose);
  t.is(await (await fetch(`${bridge.url}${MOUNT}/ping`)).text(), 'pong', 'the service goes on');
});

test('a client leaving mid-pipe: the piped source is destroyed, not left open', async (t) => {
  await leaveMidStream('/forever-piped');
  await until(() => observed.sourceDestroyed);
  t.true(observed.sourceDestroyed);
  t.is(await (await fetch(`${bridge.url}${MOUNT}/ping`)).text(), 'pong');
});

test('a piped source that fails cuts the response and is logged; the service goes on', async (t) => {
  const response = await fetch(`${bridge.url}${MOUNT}/failing-source`, { headers: { 'x-request-id': 'h3-failing-source' } });
  t.is(response.status, 200);
  await t.throwsAsync(response.arrayBuffer(), undefined, 'the client sees a cut body, not a complete one');
  const logged = logEntries(bridge).find((entry) => entry.requestId === 'h3-failing-source' && entry.level === 50);
  t.regex(String((logged?.err as { message?: string } | undefined)?.message), /the disk went away/);
  t.is(await (await fetch(`${bridge.url}${MOUNT}/ping`)).text(), 'pong');
});

/** What a client gets: the status, the body's text as far as it came, and whether it was whole, cut, or never ended (within `limitMs`). */
async function bodyEnding(app: RunningApp, pathname: string, headers: Record<string, string> = {}, limitMs = 5000): Promise<{ status: number; text: string; body: 'whole' | 'cut' | 'never ended' }> {
  const response = await fetch(`${app.url}${MOUNT}${pathname}`, { headers, signal: AbortSignal.timeout(limitMs) });
  let text = '';
  try {
    for await (const chunk of response.body ?? []) text += Buffer.from(chunk).toString();
    return { status: response.status, text, body: 'whole' };
  } catch (error) {
    return { status: response.status, text, body: (error as Error).name === 'TimeoutError' ? 'never ended' : 'cut' };
  }
}

for (const [pathname, message] of [
  ['/write-then-throw', 'after the headers'],
  ['/write-then-reject', 'after the headers, later'],
  ['/write-then-next-error', 'passed on after the headers'],
] as const) {
  test(`a handler failing after it wrote part of its answer (${pathname}): what it wrote arrives, then the connection is cut, as from Express; the failure is logged`, async (t) => {
    const requestId = `cut-${pathname.slice(1)}`;
    const [actual, expected] = await Promise.all([bodyEnding(bridge, pathname, { 'x-request-id': requestId }), bodyEnding(express, pathname)]);
    t.deepEqual(expected, { status: 200, text: 'partial', body: 'cut' }, 'Express');
    t.deepEqual(actual, expected);
    const logged = logEntries(bridge).find((entry) => entry.requestId === requestId && entry.level === 50);
    t.like(logged, { msg: 'bridged handler failed while writing its answer; the answer was cut off', first: 'answered', err: { message } });
    t.is(await (await fetch(`${bridge.url}${MOUNT}/ping`)).text(), 'pong', 'the service goes on');
  });
}

test.serial('a client leaving mid-file: the sendFile callback hears ECONNABORTED, as in Express', async (t) => {
  observed.fileError = '';
  await leaveMidStream('/big-file');
  await until(() => observed.fileError !== '');
  t.is(observed.fileError, 'ECONNABORTED');
  t.is(await (await fetch(`${bridge.url}${MOUNT}/ping`)).text(), 'pong');
});

test.serial('sendFile called after the client left: the callback hears ECONNABORTED, as in Express (issue 37, point 9)', async (t) => {
  for (const app of [express, bridge]) {
    observed.lateFileError = '';
    await leaveBeforeAnswer(app, '/file-after-leaving');
    await until(() => observed.lateFileError !== '');
    t.is(observed.lateFileError, 'ECONNABORTED', app === express ? 'Express' : 'the bridge');
  }
  t.is(await (await fetch(`${bridge.url}${MOUNT}/ping`)).text(), 'pong');
});
