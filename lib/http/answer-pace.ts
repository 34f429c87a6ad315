import type { ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';
import type { Logger } from '../logger/index.ts';
import { earnedBeyondGrace, heldBeyondCheck, PACE, type Pace, paceDeadline } from './pace.ts';

/** A server's open connections, and the response each is answering or answered last (`createDrainableServer` keeps both). */
export interface OpenConnections {
  readonly server: Server;
  readonly connections: ReadonlySet<Socket>;
  responseOn(socket: Socket): ServerResponse | undefined;
}

/** Since when, and from how many bytes accepted, a connection's allowance counts. */
interface Allowance {
  readonly since: number;
  readonly acceptedThen: number;
}

/**
 * Answers must be read at `pace`: a connection holding answer bytes the kernel has not taken
 * must get them taken within the grace, plus a second per `minBytesPerSecond` taken, or it is
 * closed (nothing can be answered on it), which frees the answer. Without this a client that
 * never reads held its connection, and the whole answer in memory, for ever. Every way of
 * answering (a whole body, a stream, a file, an error) ends in the socket, so the socket is what
 * is watched: one timer over the open connections, while there are some, and nothing per request.
 * A connection with nothing pending (a request being handled, a keep-alive one idle) is left alone.
 */
export function paceAnswers(open: OpenConnections, logger: Logger, pace: Pace = PACE): void {
  const allowances = new WeakMap<Socket, Allowance>();
  let timer: NodeJS.Timeout | undefined;
  let lastCheck = 0;
  const rule = `${pace.graceMs / 1000} s, then ${pace.minBytesPerSecond} bytes a second`;
  const cut = (socket: Socket, unsentBytes: number) => {
    const response = open.responseOn(socket);
    const request = response?.req;
    const path = request?.url?.split('?', 1)[0];
    logger.warn({ method: request?.method, path, requestId: response?.getHeader('X-Request-Id'), unsentBytes }, `answer not read by its client (at least ${rule}): connection closed`);
    socket.destroy();
  };
  const check = () => {
    if (open.connections.size === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    const now = performance.now();
    const held = heldBeyondCheck(pace, lastCheck, now);
    lastCheck = now;
    for (const socket of open.connections) {
      if (socket.writableLength === 0 || socket.destroyed) {
        allowances.delete(socket);
        continue;
      }
      const accepted = acceptedBytes(socket);
      const allowance = allowances.get(socket);
      if (held > 0) {
        // The service's own wait: decided at the next check, once the kernel's bytes have moved.
        if (allowance !== undefined) allowances.set(socket, { since: Math.min(now, allowance.since + held), acceptedThen: allowance.acceptedThen });
        continue;
      }
      if (allowance === undefined || earnedBeyondGrace(pace, allowance.since, accepted - allowance.acceptedThen, now)) allowances.set(socket, { since: now, acceptedThen: accepted });
      else if (now > paceDeadline(pace, allowance.since, accepted - allowance.acceptedThen)) cut(socket, socket.bytesWritten - accepted);
    }
  };
  open.server.on('connection', () => {
    if (timer !== undefined) return;
    lastCheck = performance.now();
    timer = setInterval(check, pace.checkMs).unref();
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
