import type { ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';
import type { Logger } from '../logger/index.ts';
import { heldBeyondCheck } from './pace.ts';

/** A server's open connections, and the response each is answering or answered last (`createDrainableServer` keeps both). */
export interface OpenConnections {
  readonly server: Server;
  readonly connections: ReadonlySet<Socket>;
  responseOn(socket: Socket): ServerResponse | undefined;
}

/**
 * How long an answer may go without the kernel taking any more of it (`limits.answerStallMs`), and how often the
 * connections are checked. The kernel takes an answer in bursts, once the client's receive buffer (up to 6 MB) has room
 * and a third of the send buffer (up to 4 MB) is free: no rate can be judged finer than that, so the rule is on silence
 * between bursts, as nginx's `send_timeout`. Measured on loopback, curl reading at 64 KiB/s had its first 10.3 MB taken
 * at once, then nothing for more than 48 s; a steady reader at that rate, 1.4 MB every 18 s.
 */
export interface AnswerStall {
  readonly stallMs: number;
  readonly checkMs: number;
}

/** Since when the kernel has taken nothing more of a connection's answer, and how much it had taken then. */
interface Progress {
  readonly since: number;
  readonly acceptedThen: number;
}

/**
 * A connection holding answer bytes the kernel has not taken must get some taken within `stallMs`, or it is closed
 * (nothing can be answered on it), which frees the answer. Without this a client that never reads held its connection,
 * and the whole answer in memory, for ever. Every way of answering (a whole body, a stream, a file, an error) ends in
 * the socket, so the socket is what is watched: one timer over the open connections, while there are some, and nothing
 * per request. A connection with nothing pending (a request being handled, a keep-alive one idle) is left alone.
 */
export function watchAnswerStalls(open: OpenConnections, logger: Logger, stall: AnswerStall): void {
  const progress = new WeakMap<Socket, Progress>();
  let timer: NodeJS.Timeout | undefined;
  let lastCheck = 0;
  const cut = (socket: Socket, unsentBytes: number) => {
    const response = open.responseOn(socket);
    const request = response?.req;
    const path = request?.url?.split('?', 1)[0];
    logger.warn({ method: request?.method, path, requestId: response?.getHeader('X-Request-Id'), unsentBytes }, `answer not read by its client (nothing taken for ${stall.stallMs / 1000} s): connection closed`);
    socket.destroy();
  };
  const check = () => {
    if (open.connections.size === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    const now = performance.now();
    const held = heldBeyondCheck(stall.checkMs, lastCheck, now);
    lastCheck = now;
    for (const socket of open.connections) {
      if (socket.writableLength === 0 || socket.destroyed) {
        progress.delete(socket);
        continue;
      }
      const accepted = acceptedBytes(socket);
      const last = progress.get(socket);
      if (held > 0) {
        // The service's own wait: decided at the next check, once the kernel's bytes have moved.
        if (last !== undefined) progress.set(socket, { since: Math.min(now, last.since + held), acceptedThen: last.acceptedThen });
      } else if (last === undefined || accepted > last.acceptedThen) {
        progress.set(socket, { since: now, acceptedThen: accepted });
      } else if (now - last.since > stall.stallMs) {
        cut(socket, socket.bytesWritten - accepted);
      }
    }
  };
  open.server.on('connection', () => {
    if (timer !== undefined) return;
    lastCheck = performance.now();
    timer = setInterval(check, stall.checkMs).unref();
  });
}

/** What Node's stream handle (libuv's) tells of its writes; not in Node's public API. */
interface StreamHandle {
  /** Bytes handed to the handle. */
  readonly bytesWritten: number;
  /** Of those, bytes the kernel has not taken yet. */
  readonly writeQueueSize: number;
}

/**
 * Bytes of `socket`'s output the kernel has taken. Node has no public count of it: a write counts
 * as done only once all of it is, and Koa writes a whole body in one (`res.end(buffer)`), so
 * `bytesWritten` and `writableLength` stand still while a client reads 32 MB slowly, as while it
 * reads nothing. libuv's handle counts what it still holds, a write's rest included. Private to
 * Node: test/http/answer-pace.test.ts's slow reader fails if an upgrade takes it away.
 */
function acceptedBytes(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: Partial<StreamHandle> | null })._handle;
  const { bytesWritten, writeQueueSize } = handle ?? {};
  // Without them, the writes done: stricter on a slow reader of one big write, never looser.
  if (bytesWritten === undefined || writeQueueSize === undefined) return socket.bytesWritten - socket.writableLength;
  return bytesWritten - writeQueueSize;
}
