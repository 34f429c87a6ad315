import pino, { type Logger } from 'pino';

export type { Logger };

/** Where each logger `createLogger` made writes: pino keeps it under a private symbol only. */
const destinations = new WeakMap<Logger, pino.DestinationStream>();
const traceFieldsOf = new WeakMap<Logger, TraceFields>();

/** `traceId` and `spanId` of the span a line is written in: none outside one. */
export type TraceFields = () => Record<string, string>;

/** The most characters of an error's text a log line keeps: beyond, the text is cut and says how much was left out. */
export const LOGGED_TEXT_CHARS = 4096;

/**
 * `text` within `LOGGED_TEXT_CHARS`. An error's text may hold what a request sent (a field name in a filter, a value a
 * handler names), up to `limits.jsonBytes`, and was written whole, in the message and again in the stack: a 900 KB
 * request made a 1.8 MB line, so that one caller could fill the log's disk twice as fast as it sent.
 */
export function boundedText(text: string, most = LOGGED_TEXT_CHARS): string {
  return text.length <= most ? text : `${text.slice(0, most)}… (${text.length - most} more characters)`;
}

/** pino's own error serializer (type, message, stack, causes, the error's fields), each text of it bounded. */
function boundedError(error: unknown): unknown {
  const serialized: unknown = pino.stdSerializers.err(error as Error);
  if (serialized === null || typeof serialized !== 'object') return typeof serialized === 'string' ? boundedText(serialized) : serialized;
  const fields = serialized as Record<string, unknown>;
  const { message, stack } = fields;
  for (const [name, value] of Object.entries(fields)) if (typeof value === 'string') fields[name] = boundedText(value);
  // The stack begins with the message: cut there too, so that the frames after it are kept.
  if (typeof stack === 'string') {
    const cut = typeof message === 'string' && message.length > LOGGED_TEXT_CHARS ? stack.replaceAll(message, boundedText(message)) : stack;
    fields.stack = boundedText(cut, 4 * LOGGED_TEXT_CHARS);
  }
  return fields;
}

/** Fields that could hold a credential are censored wherever they appear; with `traceFields`, a line within a span names its trace. */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(1), traceFields?: TraceFields): Logger {
  const options: pino.LoggerOptions = {
    mixin: traceFields,
    level,
    base: undefined,
    serializers: { err: boundedError },
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
const BLOCK_CHARS = 4096;

/**
 * Blocks of about 4 KB, each line waiting at most a quarter of a second (a `kill -9` loses that). Gathered here, not
 * by sonic-boom's `minLength`, which measured the block in bytes at every line (two-fifths of a request line's cost);
 * written synchronously, as a block awaiting an asynchronous write would swell the old generation.
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
  /** Who chose `requestId`: the caller (a well-formed `X-Request-Id`) or the service (SPEC §17.5). */
  readonly requestIdFrom?: 'caller' | 'service';
  readonly uid?: string;
  readonly project?: string;
  readonly route?: string;
  /** What went wrong: the error answer's text, or the client leaving early. */
  readonly error?: string;
}

const INFO = 30;

/** Exactly as `logger.info(fields, 'request')` would write, with the fields known beforehand: pino's general serializer took a fifth of a request's CPU. */
export function requestLineWriter(logger: Logger): (line: RequestLine) => void {
  if (!logger.isLevelEnabled('info')) return () => {};
  const destination = destinations.get(logger);
  if (destination === undefined) return (line) => logger.info(line, 'request');
  const traceFields = traceFieldsOf.get(logger);
  return ({ method, url, status, ms, tenant, requestId, requestIdFrom, uid, project, route, error }) => {
    const traced = traceFields === undefined ? '' : traceText(traceFields());
    const optional = `${field('tenant', tenant)},"requestId":${JSON.stringify(requestId)}${field('requestIdFrom', requestIdFrom)}${field('uid', uid)}${field('project', project)}${field('route', route)}${field('error', error)}${traced}`;
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
