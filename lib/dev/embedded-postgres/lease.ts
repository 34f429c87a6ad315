import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';

/**
 * The protocol between the embedded server's keeper and the processes using it: one JSON object
 * a line over a local socket. A process connects, is told `ready`, answers `hold`, is told
 * `held`: from then on, holding the connection open is holding the server.
 */
export type KeeperMessage =
  /** The server is up on `port`. */
  | { event: 'ready'; port: number; keeperPid: number }
  /** The lease is taken. */
  | { event: 'held' }
  /** Released, and others still use the server. */
  | { event: 'kept' }
  /** Released by the last user: the server has stopped. */
  | { event: 'stopped' }
  /** The keeper is stopping the server: ask again once it has. */
  | { event: 'stopping' }
  /** The server ended without being asked to (stopped by hand, crashed, or its keeper was signalled). */
  | { event: 'gone'; reason: string };

export interface HolderMessage {
  request: 'hold' | 'release';
}

/** What the keeper tells the process that started it, over the IPC channel, before it detaches. */
export type KeeperReport = { notice: string } | { ready: true } | { busy: true } | { failure: string };

export function send(socket: Socket, message: KeeperMessage | HolderMessage): void {
  if (socket.writable) socket.write(`${JSON.stringify(message)}\n`);
}

/**
 * Calls `handle` with each JSON line read from `socket`; a line that is not JSON is ignored. The
 * socket's own listeners deal with its errors (readline would re-emit them unhandled).
 */
export function onMessages<Message>(socket: Socket, handle: (message: Message) => void): void {
  const lines = createInterface({ input: socket, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('error', () => {});
  lines.on('line', (line) => {
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      return;
    }
    handle(message);
  });
}

/** The database the service uses on the embedded server. */
export const EMBEDDED_DATABASE = 'spaceport';
