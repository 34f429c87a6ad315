import pino, { type Logger } from 'pino';
import pinoPretty from 'pino-pretty';

export interface DevLog {
  /** The supervisor's own lines, named `dev`. */
  readonly logger: Logger;
  /** Writes one of an instance's JSON log lines, pretty-printed. */
  readonly writeInstanceLine: (line: string) => void;
}

interface RequestLine {
  readonly msg?: unknown;
  readonly method?: unknown;
  readonly url?: unknown;
  readonly status?: unknown;
  readonly ms?: unknown;
  readonly [field: string]: unknown;
}

/** pino-pretty on stdout, coloured on a terminal, for the supervisor and its instances alike. */
export function createDevLog(): DevLog {
  const pretty = pinoPretty({ colorize: process.stdout.isTTY === true, sync: true, destination: 1, ignore: 'pid,hostname' });
  return {
    logger: pino({ base: { name: 'dev' } }, pretty),
    writeInstanceLine: (line) => pretty.write(`${instanceLine(line)}\n`),
  };
}

/** An instance's line as make dev prints it: a request on one row, the listening line saying whose port it is. */
export function instanceLine(line: string): string {
  return line.includes('"msg":"spaceport listening"') ? internalListeningLine(line) : shortRequestLine(line);
}

/** The instance's own port is forwarded to from PORT: else a reader takes it for the one to call. */
function internalListeningLine(line: string): string {
  try {
    const { url, msg, ...rest } = JSON.parse(line) as RequestLine;
    if (msg !== 'spaceport listening') return line;
    return JSON.stringify({ ...rest, msg: `internal instance listening on ${String(url)} (make dev's own address forwards to it)` });
  } catch {
    return line;
  }
}

/** What pino-pretty prints on a line's first row (or leaves out): not folded into a request's message. */
const LINE_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name']);

/** `GET /api/shop/orders 200 3.1 ms tenant=default reqId=…` on one row, where pino-pretty gives each field a row. */
export function shortRequestLine(line: string): string {
  if (!line.includes('"msg":"request"')) return line;
  try {
    const { msg, method, url, status, ms, ...rest } = JSON.parse(line) as RequestLine;
    if (msg !== 'request') return line;
    const kept = Object.fromEntries(Object.entries(rest).filter(([field]) => LINE_FIELDS.has(field)));
    const folded = Object.entries(rest)
      .filter(([field, value]) => !LINE_FIELDS.has(field) && value !== undefined)
      .map(([field, value]) => `${field}=${fieldText(value)}`);
    return JSON.stringify({ ...kept, msg: [`${String(method)} ${String(url)} ${String(status)} ${String(ms)} ms`, ...folded].join(' ') });
  } catch {
    return line;
  }
}

function fieldText(value: unknown): string {
  return typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
}
