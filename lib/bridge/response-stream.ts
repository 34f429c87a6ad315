import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { Context } from 'koa';
import { currentRequest, runInRequest } from '../core/request-state.ts';
import type { Completions } from './completion.ts';
import { handlerFailure, headersSentError, type HeaderChange } from './errors.ts';
import { JSON_UTF8, toBuffer } from './response-bodies.ts';
import { checkedStatus } from './response-headers.ts';

/**
 * The handler's answer: none yet, a file `sendFile` claimed (`send` has not written yet), the
 * head written (`writeHead`: status and headers fixed, the body to come), or a body handed to
 * Koa (whole, or a stream written in pieces).
 */
type Answer = 'none' | 'head' | 'body' | 'file';

type WriteCallback = (error?: Error | null) => void;

const EMPTY = Buffer.alloc(0);

/** What `end` hands Koa: a UTF-8 string as it is (Koa encodes it once), anything else as bytes. */
function wholeBody(data: string | Uint8Array | undefined, encoding: BufferEncoding | undefined): string | Buffer {
  if (data === undefined) return EMPTY;
  if (typeof data === 'string' && (encoding === undefined || encoding === 'utf8' || encoding === 'utf-8')) return data.length === 0 ? EMPTY : data;
  return toBuffer(data, encoding);
}

/**
 * The writable half of the bridged `res`: Node's `ServerResponse` over Koa's `ctx`. Headers go
 * straight to Koa's response; the status is kept here until the answer is given: Koa starts at
 * 404, Express at 200, and a handler that sets a status then calls `next()` must not leak it.
 * `end` hands a whole body to Koa, `write` a stream; a second answer is ignored and reported.
 */
export class ResponseStream extends EventEmitter {
  readonly #context: Context;
  readonly #completions: Completions;
  #statusCode = 200;
  #answer: Answer = 'none';
  #stream: PassThrough | undefined;
  /** `end` was called: no more body may come. */
  #ended = false;
  /** The service is giving its own answer (an error) through `end`, after the handler's function ended. */
  #relaying = false;
  /** Told when the relayed answer reaches Koa (middleware such as compression writes it later). */
  #onHanded: (() => void) | undefined;

  constructor(context: Context, completions: Completions) {
    super();
    this.#context = context;
    this.#completions = completions;
    followSocketEvents(context.res, this, (error) => this.#abort(error));
  }

  get statusCode(): number {
    return this.#statusCode;
  }

  set statusCode(code: number) {
    this.#statusCode = code;
  }

  /** True once the head is written (`writeHead`, or the first `write`/`end`): headers can no longer change. */
  get headersSent(): boolean {
    return this.#answerStarted() || this.#context.res.headersSent;
  }

  /** Node's head-written marker, which express-session reads instead of `headersSent`. */
  get _header(): string | null {
    return this.headersSent ? 'HTTP/1.1' : null;
  }

  /** `end` was called (Node's `finished` and `writableEnded`), by the handler or by the service answering. */
  get writableEnded(): boolean {
    return this.#ended || this.#context.res.writableEnded;
  }

  get finished(): boolean {
    return this.writableEnded;
  }

  get writableFinished(): boolean {
    return this.#context.res.writableFinished;
  }

  get writable(): boolean {
    return !this.writableEnded && !this.#context.res.destroyed;
  }

  get socket(): Context['res']['socket'] {
    return this.#context.res.socket;
  }

  /** The deprecated name of `socket`, which older middleware still reads. */
  get connection(): Context['res']['socket'] {
    return this.#context.res.socket;
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.#headersOpen(`set ${name}`, 'set')) this.#context.res.setHeader(name, value);
    return this;
  }

  getHeader(name: string): string | string[] | number | undefined {
    return this.#context.res.getHeader(name);
  }

  getHeaders(): Record<string, string | string[] | number | undefined> {
    return this.#context.res.getHeaders();
  }

  getHeaderNames(): string[] {
    return this.#context.res.getHeaderNames();
  }

  hasHeader(name: string): boolean {
    return this.#context.res.hasHeader(name);
  }

  removeHeader(name: string): void {
    if (this.#headersOpen(`remove ${name}`, 'remove')) this.#context.res.removeHeader(name);
  }

  vary(field: string | string[]): this {
    if (this.#headersOpen('vary', 'set')) this.#context.vary(field);
    return this;
  }

  write(chunk: string | Uint8Array, encodingOrCallback?: BufferEncoding | WriteCallback, callback?: WriteCallback): boolean {
    if (!this.#headFirst('write')) return false;
    if (this.#answer === 'head') this.#openStream();
    if (!this.#stream || this.#stream.writableEnded) {
      this.#completions.running?.reportLate('write');
      return false;
    }
    const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    // Koa ends a HEAD response at once; Node accepts and drops such a body, so no producer may stall on 'drain'.
    if (this.#context.method === 'HEAD') {
      if (done) process.nextTick(done);
      return true;
    }
    const encoding = typeof encodingOrCallback === 'string' ? encodingOrCallback : 'utf8';
    return done ? this.#stream.write(chunk, encoding, done) : this.#stream.write(chunk, encoding);
  }

  /** Node's `end`: a body never written in pieces goes to Koa whole; a stream body is ended. */
  end(chunk?: string | Uint8Array | (() => void), encodingOrCallback?: BufferEncoding | (() => void), callback?: () => void): this {
    const data = typeof chunk === 'function' ? undefined : chunk;
    const encoding = typeof encodingOrCallback === 'string' ? encodingOrCallback : undefined;
    const done = typeof chunk === 'function' ? chunk : typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    if (!this.#headFirst('end')) return this;
    const stream = this.#stream;
    if (this.#answer !== 'head' && (!stream || stream.writableEnded)) {
      this.#completions.running?.reportLate('end');
      return this;
    }
    if (done) this.once('finish', done);
    this.#ended = true;
    if (this.#answer === 'head') this.#handToKoa(wholeBody(data, encoding));
    else stream?.end(data === undefined ? undefined : toBuffer(data, encoding));
    return this;
  }

  /** Node's `writeHead`: status and headers now, the body with `write`/`end`. */
  writeHead(
    code: number,
    messageOrHeaders?: string | Record<string, string | number | string[]> | string[],
    headers?: Record<string, string | number | string[]> | string[],
  ): this {
    if (this.#answer !== 'file' && !this.claim('writeHead')) return this;
    this.#statusCode = checkedStatus(code);
    if (code < 200) return this.#refuseInformational(code);
    const fields = typeof messageOrHeaders === 'object' ? messageOrHeaders : headers;
    if (Array.isArray(fields)) {
      for (let index = 0; index + 1 < fields.length; index += 2) this.setHeader(fields[index] as string, fields[index + 1] as string);
    } else if (fields) {
      for (const name in fields) this.setHeader(name, fields[name] as string | number | string[]);
    }
    this.#answer = 'head';
    return this;
  }

  /** Node's interim 100 Continue, ahead of the answer (Express lets it through to Node). */
  writeContinue(callback?: () => void): void {
    if (this.#interimAllowed('writeContinue', callback)) this.#context.res.writeContinue(callback);
  }

  writeProcessing(callback?: () => void): void {
    if (this.#interimAllowed('writeProcessing', callback)) this.#context.res.writeProcessing(callback);
  }

  /** Node's interim 103 Early Hints (`{link: '</style.css>; rel=preload; as=style'}`), ahead of the answer. */
  writeEarlyHints(hints: Record<string, string | string[]>, callback?: () => void): void {
    if (this.#interimAllowed('writeEarlyHints', callback)) this.#context.res.writeEarlyHints(hints, callback);
  }

  /** Node's: the head with the status set so far, on the first `write`/`end`; through `this.writeHead`, so on-headers' listeners run. */
  _implicitHeader(): void {
    this.writeHead(this.statusCode);
  }

  /** Whether middleware replaced `end`, `write` or `writeHead` on this instance, to see the answer go out. */
  wrapped(): boolean {
    return Object.hasOwn(this, 'end') || Object.hasOwn(this, 'writeHead') || Object.hasOwn(this, 'write');
  }

  /** The service's error answer (SPEC §7) through `this.writeHead`/`this.end`, for middleware that replaced them. */
  relayServiceAnswer(status: number, json: string): Promise<void> {
    const handed = new Promise<void>((resolve) => {
      this.#onHanded = resolve;
      this.once('close', resolve);
    });
    this.#relaying = true;
    try {
      this.#statusCode = status;
      this.setHeader('Content-Type', JSON_UTF8);
      this.setHeader('Content-Length', Buffer.byteLength(json));
      this.end(json);
    } finally {
      this.#relaying = false;
    }
    return handed;
  }

  /**
   * The handler failed while its body was still being written in pieces: as after Express's final
   * handler, what was written goes out and the connection is cut, so that the client neither waits
   * for an end that never comes nor takes a cut body for a whole one. A whole answer stands.
   */
  cutOff(failure: unknown): boolean {
    const stream = this.#stream;
    if (stream === undefined || stream.writableEnded || stream.destroyed) return false;
    const error = failure instanceof Error ? failure : new Error(String(failure));
    // Failed in the turn of its first write: Koa takes the body and sends what it holds within this turn.
    if (this.#context.res.headersSent) stream.destroy(error);
    else setImmediate(() => stream.destroy(error));
    return true;
  }

  protected claim(attempt: string): boolean {
    const running = this.#completions.running;
    if (this.#answer === 'none' && (this.#relaying || !running?.settled)) return true;
    running?.reportLate(attempt);
    return false;
  }

  /** The answer is to be a file, which `send` writes into this response: no other answer may start meanwhile. */
  protected claimFileTransfer(): boolean {
    if (!this.claim('sendFile')) return false;
    this.#answer = 'file';
    return true;
  }

  /** The file transfer failed: unwritten, the handler may still answer; a body cut short is destroyed. */
  protected releaseFileTransfer(error: Error): void {
    if (this.#answer === 'file') this.#answer = 'none';
    else if (this.#stream && !this.#stream.writableEnded) this.#stream.destroy(error);
  }

  /** Writes the head if it is not yet written (as Node does on the first `write`/`end`); false when this response may no longer answer. */
  #headFirst(attempt: string): boolean {
    if (this.#answer === 'none' && !this.claim(attempt)) return false;
    if (this.#answer === 'none' || this.#answer === 'file') this._implicitHeader();
    return this.#answerStarted();
  }

  /**
   * A 1xx as the answer's status is the handler's error (SPEC §7), answered 500: Node would
   * send it as the whole answer, a head without a body, and a client waiting for the final one
   * would take the next answer on the connection for it. Interim answers have their own calls.
   */
  #refuseInformational(code: number): this {
    const error = new RangeError(
      `status ${code} is informational: an answer needs a final status (200 or above); send an interim answer with res.writeContinue(), res.writeProcessing() or res.writeEarlyHints()`,
    );
    this.#completions.running?.settleOrReport({ kind: 'failed', error: handlerFailure(error, code) }, 'writeHead');
    return this;
  }

  /**
   * Only before the head, while this response's function runs: after it Node would write it into
   * the body. An HTTP/1.0 client would take it for the answer (RFC 9110 §15.2), which Node does
   * not check: it is left out, its callback still called.
   */
  #interimAllowed(attempt: string, callback: (() => void) | undefined): boolean {
    if (this.headersSent || this.#completions.running?.settled !== false) {
      this.#completions.running?.reportLate(attempt);
      return false;
    }
    if (this.#context.req.httpVersion !== '1.0') return true;
    if (callback) process.nextTick(callback);
    return false;
  }

  #openStream(): void {
    this.#stream = openBodyStream(this);
    this.#handToKoa(this.#stream);
  }

  /** Koa sets the length of a whole body, but a HEAD keeps the length the handler declared. */
  #handToKoa(body: string | Buffer | PassThrough): void {
    this.#answer = 'body';
    if (this.#statusCode === 205) {
      this.#answerResetContent();
    } else {
      const typed = this.hasHeader('Content-Type');
      const declared = body === EMPTY && this.#context.method === 'HEAD' ? this.getHeader('Content-Length') : undefined;
      // Koa's response itself rather than ctx's delegates: one delegate function serves every
      // property, and was a sixth of the bridge's cost on the heartbeat.
      const { response } = this.#context;
      response.status = this.#statusCode;
      response.body = body;
      if (!typed) response.remove('Content-Type');
      if (declared !== undefined) this.#context.res.setHeader('Content-Length', declared);
    }
    this.#completions.running?.settle({ kind: 'answered' });
    this.#onHanded?.();
  }

  /** Koa strips every header of a 205; Express keeps the type with a zero length, so write it here. */
  #answerResetContent(): void {
    this.#context.respond = false;
    this.#context.res.statusCode = 205;
    this.#context.res.end();
  }

  /**
   * Once this response's answer has started, a change throws ERR_HTTP_HEADERS_SENT, as in Express;
   * after an answer the service gave in its place (504, an error), it is ignored and reported.
   */
  #headersOpen(change: string, verb: HeaderChange): boolean {
    if (this.#answerStarted()) throw headersSentError(verb);
    if (!this.#context.res.headersSent) return true;
    this.#completions.running?.reportLate(change);
    return false;
  }

  #answerStarted(): boolean {
    return this.#answer === 'head' || this.#answer === 'body';
  }

  /** A source piped into the response failed: cut the response, or fail the handler if unanswered. */
  #abort(error: Error): void {
    const running = this.#completions.running;
    if (!this.#stream) {
      running?.settleOrReport({ kind: 'failed', error: handlerFailure(error, this.statusCode) }, 'pipe');
      return;
    }
    this.#stream.destroy(error);
    running?.reportLate('pipe', error);
  }
}

/** A body written in pieces as `ctx.body`: Koa pipes it with its own back-pressure and error handling. */
export function openBodyStream(response: EventEmitter): PassThrough {
  const body = new PassThrough();
  body.on('drain', () => response.emit('drain'));
  body.on('error', () => {});
  return body;
}

/**
 * Re-emits the socket's `finish` and `close` on the bridged `res`, where piping sources and
 * handlers listen. `pipe` leaves a source paused, its file or socket open, when the response ends
 * first (client gone, HEAD), so it is destroyed then; a failing source goes to `onSourceError`.
 */
export function followSocketEvents(raw: ServerResponse, response: EventEmitter, onSourceError: (error: Error) => void): void {
  const sources = new Set<Readable>();
  const onPipe = (source: Readable) => {
    sources.add(source);
    source.once('error', onSourceError);
  };
  response.on('pipe', onPipe);
  // Node emits them from the socket, outside the request: a listener's `db` call would be told it has no request at all.
  // The request's state alone, not AsyncLocalStorage.snapshot(), which cost 22 µs of CPU a request (a heartbeat 26 → 49).
  const request = currentRequest();
  const asTheRequest = (emit: () => void) => (request === undefined ? emit() : runInRequest(request, emit));
  raw.once('finish', () => asTheRequest(() => response.emit('finish')));
  raw.once('close', () => asTheRequest(() => {
    response.off('pipe', onPipe);
    for (const source of sources) {
      if (!source.readableEnded) source.destroy();
    }
    response.emit('close');
  }));
}
