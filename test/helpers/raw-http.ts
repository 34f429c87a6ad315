import { connect } from 'node:net';

/** One HTTP answer read off the wire. */
export interface RawAnswer {
  readonly status: number;
  /** Lower-cased names; a repeated header keeps every value. */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  /** The status line and header lines as sent. */
  readonly head: string;
  readonly body: Buffer;
}

/** Everything a connection brought back for the bytes written on it. */
export interface RawOutcome {
  /** Final answers in order (interim 1xx ones left out). */
  readonly answers: readonly RawAnswer[];
  /** True when the server had not closed the connection after `timeoutMs`. */
  readonly timedOut: boolean;
  /** Bytes after the last complete answer: a truncated or unparsable answer. */
  readonly leftover: Buffer;
  /** Every byte received. */
  readonly received: Buffer;
  readonly milliseconds: number;
}

/**
 * Writes `request` as is on a new connection to 127.0.0.1:`port` and reads until the server
 * closes it (the request should ask for `Connection: close`), or `timeoutMs` passes. For what
 * fetch cannot send: any method, malformed headers, raw bytes in the target and headers.
 */
export function rawExchange(port: number, request: Buffer, options: { timeoutMs: number; firstIsHead: boolean }): Promise<RawOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, options.timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const received = Buffer.concat(chunks);
      const { answers, leftover } = parseAnswers(received, options.firstIsHead);
      resolve({ answers, timedOut, leftover, received, milliseconds: performance.now() - started });
    });
    socket.write(request);
  });
}

/** What `trickledExchange` saw: the outcome, and when the first byte of an answer came. */
export interface TrickledOutcome extends RawOutcome {
  /** Milliseconds from the connection's start to the first byte the server sent; undefined if none. */
  readonly firstReplyMs: number | undefined;
  /** Body bytes written before the server closed the connection or the body was all sent. */
  readonly bytesSent: number;
}

/**
 * Writes `head` on a new connection to 127.0.0.1:`port`, then `body` `pieceBytes` at a time,
 * one piece every `intervalMs`, as a slow client would, and reads until the server closes the
 * connection or `timeoutMs` passes (writing stops when the server closes).
 */
/** `firstPieceBytes`: the first piece's size, when it differs (a fast start, then a trickle). */
export function trickledExchange(port: number, head: string, body: Buffer, options: { pieceBytes: number; intervalMs: number; timeoutMs: number; firstPieceBytes?: number }): Promise<TrickledOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    let firstReplyMs: number | undefined;
    let bytesSent = 0;
    let timedOut = false;
    const writer = setInterval(() => {
      if (bytesSent >= body.length || socket.destroyed) return clearInterval(writer);
      const pieceBytes = bytesSent === 0 ? (options.firstPieceBytes ?? options.pieceBytes) : options.pieceBytes;
      socket.write(body.subarray(bytesSent, bytesSent + pieceBytes));
      bytesSent = Math.min(body.length, bytesSent + pieceBytes);
    }, options.intervalMs);
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, options.timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      firstReplyMs ??= performance.now() - started;
      chunks.push(chunk);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(writer);
      clearTimeout(timer);
      const received = Buffer.concat(chunks);
      const { answers, leftover } = parseAnswers(received, false);
      resolve({ answers, timedOut, leftover, received, milliseconds: performance.now() - started, firstReplyMs, bytesSent });
    });
    socket.write(head);
  });
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** Splits a byte stream into HTTP/1.x answers. */
export function parseAnswers(bytes: Buffer, firstIsHead: boolean): { answers: RawAnswer[]; leftover: Buffer } {
  const answers: RawAnswer[] = [];
  let offset = 0;
  for (;;) {
    const headEnd = bytes.indexOf(HEAD_END, offset);
    if (headEnd === -1) break;
    const head = bytes.subarray(offset, headEnd).toString('latin1');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
    if (!Number.isInteger(status)) break;
    const headers = headerMap(head);
    const bodyStart = headEnd + HEAD_END.length;
    const bodyless = (firstIsHead && answers.length === 0) || status < 200 || status === 204 || status === 304;
    const framed = bodyless ? { body: Buffer.alloc(0), end: bodyStart } : bodyOf(bytes, bodyStart, headers);
    if (framed === undefined) break;
    if (status >= 200) answers.push({ status, headers, head, body: framed.body });
    offset = framed.end;
  }
  return { answers, leftover: bytes.subarray(offset) };
}

function headerMap(head: string): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return headers;
}

/** The body at `start` framed by the headers; undefined when it is cut short. */
function bodyOf(bytes: Buffer, start: number, headers: ReadonlyMap<string, readonly string[]>): { body: Buffer; end: number } | undefined {
  if (headers.get('transfer-encoding')?.some((value) => /chunked/i.test(value))) return dechunk(bytes, start);
  const length = headers.get('content-length')?.[0];
  if (length === undefined) return { body: bytes.subarray(start), end: bytes.length };
  const end = start + Number(length);
  return end <= bytes.length ? { body: bytes.subarray(start, end), end } : undefined;
}

function dechunk(bytes: Buffer, start: number): { body: Buffer; end: number } | undefined {
  const parts: Buffer[] = [];
  let offset = start;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isInteger(size)) return undefined;
    offset = lineEnd + 2;
    if (size === 0) {
      const trailerEnd = bytes.indexOf('\r\n', offset);
      return trailerEnd === -1 ? undefined : { body: Buffer.concat(parts), end: trailerEnd + 2 };
    }
    if (offset + size + 2 > bytes.length) return undefined;
    parts.push(bytes.subarray(offset, offset + size));
    offset += size + 2;
  }
}
