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
    writeInstanceLine: (line) => pretty.write(`${shortRequestLine(line)}\n`),
  };
}

/** A request's line reads `GET /api/shop/orders 200 3.1 ms`; its tenant and request id follow. */
function shortRequestLine(line: string): string {
  if (!line.includes('"msg":"request"')) return line;
  try {
    const { msg, method, url, status, ms, ...rest } = JSON.parse(line) as RequestLine;
    if (msg !== 'request') return line;
    return JSON.stringify({ ...rest, msg: `${String(method)} ${String(url)} ${String(status)} ${String(ms)} ms` });
  } catch {
    return line;
  }
}
