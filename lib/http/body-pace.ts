import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import createError from 'http-errors';
import { hasBody } from '../values/has-body.ts';
import { earnedBeyondGrace, heldBeyondCheck, PACE, type Pace, paceDeadline } from './pace.ts';

/** The answer to a body that stalled; it closes the connection, whose remaining bytes will never come. */
export function bodyTimedOut(): Error {
  return createError(408, 'request body timed out', { headers: { Connection: 'close' } });
}

/** The answer to a body whose client stopped sending (half-closed) before all of it came. */
export function bodyIncomplete(): Error {
  return createError(400, 'request body incomplete: the client stopped sending', { headers: { Connection: 'close' } });
}

/** Each connection's request that was answered before its body was all in (the body Node now discards), with its answer. */
const answeredEarly = new WeakMap<object, { request: IncomingMessage; response: ServerResponse }>();

/**
 * The answer of a request answered before `socket` received all its body: a parser error in that
 * body is that request's, which must get no second answer (and may still be writing its first).
 */
export function answerBeforeItsBody(socket: object): ServerResponse | undefined {
  const early = answeredEarly.get(socket);
  return early !== undefined && !early.request.complete ? early.response : undefined;
}

/** One request whose body is still on its way. */
export interface BodyWatch {
  /** `answering`, unless the body stalls first: `bodyTimedOut()` (or, the answer begun, the connection closed). */
  race(answering: Promise<void>): Promise<void>;
  /** The answer is decided: Node discards the body's rest within the grace, or the connection closes. */
  answered(): void;
}

/**
 * Request bodies must arrive at `PACE` (10 s, then 1 KiB/s): a stall is answered 408 within 10 to
 * 21 s (the check's second included). One timer for every body in flight, running only while
 * there are some. While the service holds unread body bytes, a slow body is its own doing, not
 * the client's: the allowance starts over.
 */
export class BodyWatcher {
  readonly #pace: Pace;
  readonly #watched = new Set<Watched>();
  #timer: NodeJS.Timeout | undefined;
  #lastCheck = 0;

  constructor(pace: Pace = PACE) {
    this.#pace = pace;
  }

  /** A watch for `request`'s body; undefined when it has none, so that most requests cost nothing here. */
  watch(request: IncomingMessage, response: ServerResponse): BodyWatch | undefined {
    if (request.complete || !hasBody(request)) return undefined;
    const watched = new Watched(request, response, this.#pace, () => this.#forget(watched));
    this.#watched.add(watched);
    if (this.#timer === undefined) {
      this.#lastCheck = performance.now();
      this.#timer = setInterval(() => this.#check(), this.#pace.checkMs).unref();
    }
    return watched;
  }

  #check(): void {
    const now = performance.now();
    const held = heldBeyondCheck(this.#pace.checkMs, this.#lastCheck, now);
    this.#lastCheck = now;
    for (const watched of this.#watched) watched.check(now, held);
  }

  #forget(watched: Watched): void {
    this.#watched.delete(watched);
    if (this.#watched.size > 0 || this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** Closing at once, with the client's bytes still coming in, would reset it and could cost it the answer's end. */
const LINGER_MS = 10_000;

/**
 * Closes `socket` once `response` is written: a complete answer is flushed first (`LINGER_MS` at
 * most), one still being made never will be. Decided a turn later, so that an answer decided in
 * this one (Node's parser reports a packet's rest in its request's turn) is written by Koa first.
 */
export function closeOnceWritten(response: ServerResponse, socket: Duplex): void {
  setImmediate(() => {
    if (!response.writableEnded) {
      socket.destroy();
      return;
    }
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
    if (response.writableFinished) socket.end();
    else response.once('finish', () => socket.end());
  });
}

class Watched implements BodyWatch {
  readonly #request: IncomingMessage;
  readonly #response: ServerResponse;
  readonly #pace: Pace;
  readonly #forget: () => void;
  /** Since when, and from how many bytes received, the allowance counts. */
  #since = performance.now();
  #bytesThen: number;
  #answeredAt: number | undefined;
  #stall: ((error: Error) => void) | undefined;

  constructor(request: IncomingMessage, response: ServerResponse, pace: Pace, forget: () => void) {
    this.#request = request;
    this.#response = response;
    this.#pace = pace;
    this.#forget = forget;
    this.#bytesThen = request.socket.bytesRead;
  }

  race(answering: Promise<void>): Promise<void> {
    if (this.#answeredAt !== undefined) return answering;
    return new Promise((resolve, reject) => {
      this.#stall = reject;
      answering.then(resolve, reject).finally(() => {
        this.#stall = undefined;
      });
    });
  }

  answered(): void {
    this.#answeredAt ??= performance.now();
    this.#stall = undefined;
    if (this.#request.complete) this.#forget();
    else answeredEarly.set(this.#request.socket, { request: this.#request, response: this.#response });
  }

  /** `held`: how long the service's own event loop held up the check (`heldBeyondCheck`), which is not the client's. */
  check(now: number, held = 0): void {
    const socket = this.#request.socket;
    if (this.#request.complete || socket.destroyed) {
      this.#forget();
    } else if (held > 0) {
      // Decided at the next check, once the bytes the kernel holds have been read.
      this.#since = Math.min(now, this.#since + held);
      if (this.#answeredAt !== undefined) this.#answeredAt = Math.min(now, this.#answeredAt + held);
    } else if ((this.#answeredAt === undefined && this.#request.readableLength > 0) || earnedBeyondGrace(this.#pace, this.#since, socket.bytesRead - this.#bytesThen, now)) {
      // The service has bytes it has not read yet (the wait is its own), or the client earned more
      // time than it may keep: the allowance starts over.
      this.#since = now;
      this.#bytesThen = socket.bytesRead;
    } else if (socket.readableEnded || now > this.#deadline(socket.bytesRead)) {
      // A client that ended its side (half-closed) will send no more: no reason to wait the grace.
      this.#forget();
      if (this.#stall !== undefined && !this.#response.headersSent) this.#stall(socket.readableEnded ? bodyIncomplete() : bodyTimedOut());
      else closeOnceWritten(this.#response, socket);
    }
  }

  /** The grace, a second more per `minBytesPerSecond` received; once answered, the grace at most. */
  #deadline(bytes: number): number {
    const paced = paceDeadline(this.#pace, this.#since, bytes - this.#bytesThen);
    return this.#answeredAt === undefined ? paced : Math.min(paced, this.#answeredAt + this.#pace.graceMs);
  }
}
