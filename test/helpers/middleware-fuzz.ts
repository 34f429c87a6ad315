import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { fuzzBody } from './fuzz-bodies.ts';
import { HOOKS, hooksRoutes, type HooksService } from './middleware-apps.ts';
import { parseAnswers, type RawAnswer } from './raw-http.ts';

/**
 * A property over the routes of the middleware fixture (Express's body middleware and raw
 * stream readers, test/helpers/middleware-apps.ts): requests of every content type (wrong,
 * missing, multipart with bad boundaries), body, encoding, chunking and framing (a
 * Content-Length longer or shorter than the body, a client that aborts mid-body), a few at a
 * time. Whatever comes, the process lives on without an uncaught exception, /healthz answers
 * 200 after every batch, and each request the client framed whole gets one answer, never the
 * 504 of a middleware left waiting.
 */

/** How the body goes on the wire. */
const FRAMINGS = ['exact length', 'chunked', 'length longer than the body, then the client stops', 'length shorter than the body', 'client aborts mid-body'] as const;
type Framing = (typeof FRAMINGS)[number];

export interface MiddlewareExchange {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly contentEncoding: string | undefined;
  readonly body: Buffer;
  readonly framing: Framing;
  /** The body is written in this many pieces, `pauseMs` apart. */
  readonly pieces: number;
  readonly pauseMs: number;
  /** Where a short length or an abort cuts the body, as a share of it (0 to 1). */
  readonly cut: number;
}

const CONTENT_TYPES = [
  'application/octet-stream',
  'text/csv',
  'text/csv; charset=latin1',
  'text/csv; charset=klingon',
  'text/plain',
  'application/json',
  'application/json; charset=utf-16',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=plainboundary',
  'multipart/form-data; boundary="quoted"',
  'multipart/mixed; boundary=b',
  'image/png',
  '*/*',
  'text/',
  ';;;',
];

/** A body of the upload fuzzer (multipart near misses, JSON, forms, noise) or bytes of any kind. */
const bodyAndType = fc.oneof(
  fuzzBody('upload', 'not-a-password').map(({ contentType, bytes }) => ({ contentType, bytes })),
  fc.record({
    contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
    bytes: fc.oneof(
      fc.uint8Array({ maxLength: 8192 }).map((bytes) => Buffer.from(bytes)),
      fc.integer({ min: 96 * 1024, max: 104 * 1024 }).map((size) => Buffer.alloc(size, 'x')), // around express.raw's 100 kB
    ),
  }),
);

/** A Content-Encoding, with the body encoded to match or left as it is. */
const encoding = fc.option(
  fc.tuple(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown'), fc.boolean()).map(([name, encoded]) => ({ name, encoded })),
  { nil: undefined, freq: 3 },
);

function encoded(bytes: Buffer, chosen: { name: string; encoded: boolean } | undefined): Buffer {
  if (chosen === undefined || !chosen.encoded) return bytes;
  if (chosen.name === 'gzip') return gzipSync(bytes);
  if (chosen.name === 'deflate') return deflateSync(bytes);
  if (chosen.name === 'br') return brotliCompressSync(bytes);
  return bytes;
}

/** One exchange over the fixture's `routes`, a label sometimes swapped for another type. */
export function middlewareExchange(paths: readonly string[]): fc.Arbitrary<MiddlewareExchange> {
  return fc
    .record({
      path: fc.constantFrom(...paths),
      body: bodyAndType,
      relabel: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined, freq: 4 }),
      encoding,
      framing: fc.constantFrom(...FRAMINGS),
      pieces: fc.integer({ min: 1, max: 8 }),
      pauseMs: fc.constantFrom(0, 0, 1, 5, 20),
      cut: fc.double({ min: 0, max: 1, noNaN: true }),
    })
    .map(({ path, body, relabel, encoding: chosen, ...rest }) => {
      const exchange = { path, contentType: relabel ?? body.contentType, contentEncoding: chosen?.name, body: encoded(body.bytes, chosen), ...rest };
      // fast-check reports a counterexample in these words rather than as a dump of its bytes.
      return Object.assign(exchange, { [fc.toStringMethod]: () => describeExchange(exchange) });
    });
}

export function describeExchange(exchange: MiddlewareExchange): string {
  const start = JSON.stringify(exchange.body.subarray(0, 60).toString('latin1'));
  const encoding = exchange.contentEncoding === undefined ? '' : ` (${exchange.contentEncoding})`;
  return `POST ${exchange.path} ${exchange.contentType ?? 'no type'}${encoding}, ${exchange.framing}, ${exchange.body.length} bytes in ${exchange.pieces} pieces ${exchange.pauseMs} ms apart (cut ${exchange.cut.toFixed(2)}): ${start}`;
}

type Ending = 'wait' | 'half-close' | 'abort';

interface Wire {
  readonly head: string;
  /** What is written after the head, piece by piece. */
  readonly pieces: Buffer[];
  /** After the last piece: wait for the answer, stop sending (half-close), or leave. */
  readonly ending: Ending;
}

function wireOf(exchange: MiddlewareExchange): Wire {
  const headers = [`POST ${HOOKS}${exchange.path} HTTP/1.1`, 'Host: 127.0.0.1'];
  if (exchange.contentType !== undefined) headers.push(`Content-Type: ${exchange.contentType}`);
  if (exchange.contentEncoding !== undefined) headers.push(`Content-Encoding: ${exchange.contentEncoding}`);
  const head = (framingHeader: string) => `${[...headers, framingHeader].join('\r\n')}\r\n\r\n`;
  if (exchange.framing === 'chunked') {
    const chunks = split(exchange.body, exchange.pieces).map((piece) => Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
    return { head: head('Transfer-Encoding: chunked'), pieces: [...chunks, Buffer.from('0\r\n\r\n')], ending: 'wait' };
  }
  const { declared, sent, ending } = lengthFraming(exchange);
  return { head: head(`Content-Length: ${declared}`), pieces: split(sent, exchange.pieces), ending };
}

/** The Content-Length declared, the bytes sent and the client's ending, for a framing by length. */
function lengthFraming({ body, framing, cut }: MiddlewareExchange): { declared: number; sent: Buffer; ending: Ending } {
  const cutAt = Math.floor(body.length * cut);
  switch (framing) {
    case 'length longer than the body, then the client stops':
      return { declared: body.length + 1 + cutAt, sent: body, ending: 'half-close' };
    case 'length shorter than the body':
      return { declared: cutAt, sent: body, ending: 'wait' };
    case 'client aborts mid-body':
      return { declared: body.length, sent: body.subarray(0, cutAt), ending: 'abort' };
    default:
      return { declared: body.length, sent: body, ending: 'wait' };
  }
}

function split(bytes: Buffer, count: number): Buffer[] {
  const size = Math.max(1, Math.ceil(bytes.length / count));
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) pieces.push(bytes.subarray(offset, offset + size));
  return pieces;
}

/** What the client saw: the answers, and whether the exchange was over (an answer or a close) in time. */
interface Seen {
  readonly answers: readonly RawAnswer[];
  readonly overInTime: boolean;
}

/**
 * Writes `exchange` on a new keep-alive connection, then reads until an answer is complete, the
 * server closes the connection or `limitMs` passes. Keep-alive, because a server that closes
 * after answering a request whose body is still coming resets the connection, and the reset
 * can destroy the answer on its way to the client (Express alike): the client closes instead.
 */
async function send(port: number, exchange: MiddlewareExchange, limitMs: number): Promise<Seen> {
  const wire = wireOf(exchange);
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const answersSoFar = () => parseAnswers(Buffer.concat(chunks), false).answers;
  const over = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), limitMs);
    const end = () => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (answersSoFar().length > 0) end();
    });
    socket.once('close', end);
  });
  socket.on('error', () => {});
  socket.write(wire.head);
  for (const piece of wire.pieces) {
    if (socket.destroyed) break;
    if (exchange.pauseMs > 0) await delay(exchange.pauseMs);
    socket.write(piece);
  }
  if (wire.ending === 'abort') socket.destroy();
  if (wire.ending === 'half-close') socket.end();
  const overInTime = await over;
  socket.destroy();
  return { answers: answersSoFar(), overInTime };
}

/** What is wrong with how the service treated one exchange. */
function problemsOf(exchange: MiddlewareExchange, seen: Seen): string[] {
  if (exchange.framing === 'client aborts mid-body') return [];
  const problems = seen.overInTime ? [] : ['neither answered nor closed by the time limit'];
  if (exchange.framing !== 'exact length' && exchange.framing !== 'chunked') return problems;
  const [answer] = seen.answers;
  if (answer === undefined) return [...problems, 'no answer'];
  if (answer.status === 504) problems.push('504: a middleware or handler was left waiting');
  return problems;
}

export interface FuzzTally {
  batches: number;
  exchanges: number;
  readonly statuses: Map<number | 'none', number>;
  /** Handler failures the service logged (500s), by error type and message. */
  readonly failures: Map<string, number>;
  /** Log lines already looked at. */
  linesRead: number;
}

/**
 * The handler failures logged since the last look. A TypeError among them is a problem: it is
 * what a member of `req` that is missing, or not what Express's is, throws inside a request.
 */
function newFailures(service: HooksService, tally: FuzzTally): string[] {
  const lines = service.logLines().slice(tally.linesRead);
  tally.linesRead += lines.length;
  const problems: string[] = [];
  for (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string; stack?: string } };
    if (entry.msg !== 'unhandled error') continue;
    const failure = `${entry.err?.type}: ${entry.err?.message}`;
    tally.failures.set(failure, (tally.failures.get(failure) ?? 0) + 1);
    if (entry.err?.type === 'TypeError') problems.push(`a handler failed with ${entry.err.stack?.slice(0, 400)}`);
  }
  return problems;
}

/** Sends a batch at once, then checks the exchanges and that the service still serves. */
async function checkBatch(service: HooksService, batch: readonly MiddlewareExchange[], limitMs: number, tally: FuzzTally): Promise<void> {
  const seen = await Promise.all(batch.map((exchange) => send(service.port, exchange, limitMs)));
  tally.batches++;
  tally.exchanges += batch.length;
  const problems = batch.flatMap((exchange, index) => {
    const outcome = seen[index] as Seen;
    const status = outcome.answers[0]?.status ?? 'none';
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    return problemsOf(exchange, outcome).map((problem) => `${problem}: ${describeExchange(exchange)}`);
  });
  problems.push(...newFailures(service, tally));
  if (!service.running()) problems.push('the service process died');
  problems.push(...service.uncaughtExceptions().map((line) => `uncaught exception: ${line.slice(0, 400)}`));
  const health = await service.health();
  if (health !== 200) problems.push(`/healthz answered ${health}`);
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

export interface FuzzOptions {
  runs: number;
  /** The run stops there, passing, if the runs are not all done (a loaded machine). */
  timeLimitMs: number;
  /** The service's `limits.handlerMs`: a request must be over, one way or another, soon after. */
  handlerMs: number;
}

/**
 * Runs the property over every route of the fixture: `runs` batches of one to three exchanges,
 * or as many as `timeLimitMs` allows. It stops at the first failure without shrinking, as a
 * dead or damaged service would fail every smaller case too. BRIDGE_FUZZ_SEED=<n> replays a run.
 */
export async function fuzzMiddleware(service: HooksService, options: FuzzOptions): Promise<FuzzTally> {
  const paths = (await hooksRoutes()).map((route) => route.path);
  const seed = process.env.BRIDGE_FUZZ_SEED ? Number(process.env.BRIDGE_FUZZ_SEED) : undefined;
  const tally: FuzzTally = { batches: 0, exchanges: 0, statuses: new Map(), failures: new Map(), linesRead: 0 };
  const limitMs = options.handlerMs + 5000;
  await fc.assert(
    fc.asyncProperty(fc.array(middlewareExchange(paths), { minLength: 1, maxLength: 3 }), (batch) => checkBatch(service, batch, limitMs, tally)),
    {
      numRuns: options.runs,
      endOnFailure: true,
      includeErrorInReport: true,
      plugins: [fc.interruptAfterTimeLimit(options.timeLimitMs)],
      ...(seed === undefined ? {} : { seed }),
    },
  );
  return tally;
}

/** What the run met: first statuses and logged handler failures, by count. */
export function tallySummary(tally: FuzzTally): string {
  const count = (entries: Map<unknown, number>) => [...entries].map(([key, times]) => `${key} ×${times}`).join(', ');
  return `${tally.batches} batches, ${tally.exchanges} requests; first status: ${count(tally.statuses)}; handler failures: ${count(tally.failures) || 'none'}`;
}
