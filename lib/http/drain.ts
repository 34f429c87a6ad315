import { createServer, type RequestListener, type Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

export interface DrainTiming {
  /** How long an idle keep-alive connection is left open once draining starts. */
  graceMs: number;
  /** When every connection still open is cut, whatever it is doing. */
  limitMs: number;
}

/**
 * An idle connection dropped as its client sends gets a reset and no answer: one second is long
 * for a sending client, short for a deploy. The limit leaves time in SPEC §2.5's 10 s to close the pool.
 */
export const DRAIN_TIMING: DrainTiming = Object.freeze({ graceMs: 1000, limitMs: 8000 });
const SWEEP_MS = 100;
/** Loop turns spent accepting what the kernel has queued before the listener closes (each a few µs). */
const ACCEPT_TURNS = 20;

export interface DrainableServer {
  readonly server: Server;
  /** The connections open now. */
  readonly connections: ReadonlySet<Socket>;
  /**
   * The response `socket` is answering (the oldest not finished: a pipelined request's answer waits behind it), or
   * answered last.
   */
  responseOn(socket: Socket): ServerResponse | undefined;
  /**
   * Stops accepting; once the listener is closed every answer says `Connection: close`, idle
   * connections close after the grace, all by the limit. Resolves when none is left; once.
   */
  drain(): Promise<void>;
}

/** An HTTP server for `handler` that can be drained without losing a request a client sent. */
export function createDrainableServer(handler: RequestListener, timing: DrainTiming = DRAIN_TIMING): DrainableServer {
  const connections = new Set<Socket>();
  let accepted = 0;
  const currentResponse = new WeakMap<Socket, ServerResponse>();
  let draining: Promise<void> | undefined;
  let listenerClosed = false;
  const serve: RequestListener = (request, response) => {
    if (listenerClosed) response.shouldKeepAlive = false;
    currentResponse.set(request.socket, response);
    handler(request, response);
  };
  // Node would answer a request without Host, or with an Expect other than 100-continue, with a
  // bare status line of its own; the service answers them as it answers everything (SPEC §7).
  const server = createServer({ requireHostHeader: false }, serve);
  server.on('checkExpectation', serve);
  server.on('connection', (socket: Socket) => {
    accepted++;
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  // Clients are told to close only once the listener is closed: one told earlier reconnects at
  // once, and a connection the kernel queued just before the listener closed is reset, with the
  // request already written on it. Refused instead, the client knows nothing was sent.
  async function drain(): Promise<void> {
    await acceptQueued(() => accepted);
    const drained = closeWhenDrained(server, timing);
    listenerClosed = true;
    for (const socket of connections) {
      const response = currentResponse.get(socket);
      if (response !== undefined && !response.headersSent) response.shouldKeepAlive = false;
    }
    await drained;
  }

  return {
    server,
    connections,
    responseOn: (socket) => writingOn(socket) ?? currentResponse.get(socket),
    drain: () => {
      draining ??= drain();
      return draining;
    },
  };
}

/** After the next I/O poll: an immediate set in this turn may run before it, one set from an immediate after. */
function afterNextPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * Closing the listener resets the connections the kernel completed but Node has not accepted,
 * with the requests already sent on them. Each loop turn polls and accepts those: turn until one
 * accepts nothing more (not forever: clients told to close reconnect).
 */
async function acceptQueued(accepted: () => number): Promise<void> {
  for (let turn = 0; turn < ACCEPT_TURNS; turn++) {
    const before = accepted();
    await afterNextPoll();
    if (accepted() === before) return;
  }
}

function closeWhenDrained(server: Server, timing: DrainTiming): Promise<void> {
  return new Promise((resolve) => {
    let sweeper: NodeJS.Timeout | undefined;
    const grace = setTimeout(() => {
      server.closeIdleConnections();
      sweeper = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
    }, timing.graceMs);
    const deadline = setTimeout(() => server.closeAllConnections(), timing.limitMs);
    // `http.Server#close` would also drop the idle keep-alive connections at once, racing the
    // requests clients are about to send on them: only the listener closes here.
    NetServer.prototype.close.call(server, () => {
      clearTimeout(grace);
      clearTimeout(deadline);
      clearInterval(sweeper);
      // With no connection left, Node's own close only stops its request-timeout checks.
      server.close();
      resolve();
    });
  });
}

/**
 * The response Node is writing on `socket` now (a pipelined request's answer waits until it is done): Node's own
 * `_httpMessage`, not in its public API, read here rather than tracking every response's end on the request path.
 */
function writingOn(socket: Socket): ServerResponse | undefined {
  const writing = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
  return writing instanceof ServerResponse ? writing : undefined;
}
