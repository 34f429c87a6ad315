import pino, { type Logger } from 'pino';

export type { Logger };

/** Where each logger `createLogger` made writes: pino keeps it under a private symbol only. */
const destinations = new WeakMap<Logger, pino.DestinationStream>();
/** The trace fields of each logger `createLogger` made with traces on. */
const traceFieldsOf = new WeakMap<Logger, TraceFields>();

/** `traceId` and `spanId` of the span a line is written in: none outside one. */
export type TraceFields = () => Record<string, string>;

/**
 * JSON lines; fields that could hold a credential are censored wherever they appear. With
 * `traceFields` (traces on), each line written within a span names its trace.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(1), traceFields?: TraceFields): Logger {
  const options: pino.LoggerOptions = {
    mixin: traceFields,
    level,
    base: undefined,
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'secret', '*.secret', 'authorization', '*.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
  };
  const logger = pino(options, destination);
  destinations.set(logger, destination);
  if (traceFields !== undefined) traceFieldsOf.set(logger, traceFields);
  return logger;
}

const FLUSH_EVERY_MS = 250;
/** About 4 KB of log text (a line is mostly ASCII): a block is written once it has this many characters. */
const BLOCK_CHARS = 4096;

/**
 * Standard output written in blocks of about 4 KB instead of one write call a line: lines wait
 * at most a quarter of a second, and whatever is left is written when the process exits or a
 * fatal line is logged (a `kill -9`, or a signal the service does not handle, loses that quarter
 * of a second). The lines are gathered here, in one string, and sonic-boom writes each block
 * synchronously (retrying a busy pipe), as pino's default destination writes each line. Its own
 * `minLength` gathering measured the whole pending block in bytes at every line, two-fifths of
 * the cost of a request line on the heartbeat; and a block waiting for an asynchronous write
 * would outlive young garbage collections and swell the old generation with log text.
 */
export function bufferedStdout(): pino.DestinationStream & { flushSync(): void } {
  const destination = pino.destination({ dest: 1, sync: true });
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const block = pending;
    pending = '';
    destination.write(block);
  };
  setInterval(flush, FLUSH_EVERY_MS).unref();
  process.once('exit', flush);
  return {
    write(line: string) {
      pending += line;
      if (pending.length >= BLOCK_CHARS) flush();
    },
    // pino calls it after a fatal line: that one is written at once.
    flushSync: flush,
  };
}

/** The fields of the one line each request is logged with (SPEC §2.4). */
export interface RequestLine {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly ms: number;
  readonly tenant: string | undefined;
  readonly requestId: string;
  /** The authenticated caller's `uid`, when system authentication found one. */
  readonly uid?: string;
  /** The project route that answered, if one did. */
  readonly project?: string;
  readonly route?: string;
  /** What went wrong: the error answer's text, or the client leaving early. */
  readonly error?: string;
}

const INFO = 30;

/**
 * Writes request lines to `logger`'s destination exactly as `logger.info(fields, 'request')`
 * would, but with the fields known beforehand: pino's general serializer took a fifth of a
 * request's CPU. Lines are dropped, as pino drops them, when the level is above info. A logger
 * `createLogger` did not make (a child, say) writes them through pino.
 */
export function requestLineWriter(logger: Logger): (line: RequestLine) => void {
  if (!logger.isLevelEnabled('info')) return () => {};
  const destination = destinations.get(logger);
  if (destination === undefined) return (line) => logger.info(line, 'request');
  const traceFields = traceFieldsOf.get(logger);
  return ({ method, url, status, ms, tenant, requestId, uid, project, route, error }) => {
    const traced = traceFields === undefined ? '' : traceText(traceFields());
    const optional = `${field('tenant', tenant)},"requestId":${JSON.stringify(requestId)}${field('uid', uid)}${field('project', project)}${field('route', route)}${field('error', error)}${traced}`;
    destination.write(`{"level":${INFO},"time":${Date.now()},"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"status":${status},"ms":${ms}${optional},"msg":"request"}\n`);
  };
}

function traceText(fields: Record<string, string>): string {
  return field('traceId', fields.traceId) + field('spanId', fields.spanId);
}

/** `,"name":"value"`, or nothing for a value left out (as pino leaves out undefined fields). */
function field(name: string, value: string | undefined): string {
  return value === undefined ? '' : `,"${name}":${JSON.stringify(value)}`;
}
