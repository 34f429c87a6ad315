import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';

/**
 * One JSON object a line over a local socket: a process connects, is told `ready`, answers `hold`, is told `held`;
 * from then on, holding the connection open is holding the server.
 */
export type KeeperMessage =
  | { event: 'ready'; port: number; keeperPid: number }
  | { event: 'held' }
  /** Released, and others still use the server. */
  | { event: 'kept' }
  /** Released by the last user: the server has stopped. */
  | { event: 'stopped' }
  /** Ask again once the server has stopped. */
  | { event: 'stopping' }
  /** The server ended without being asked to (stopped by hand, crashed, or its keeper was signalled). */
  | { event: 'gone'; reason: string };

export interface HolderMessage {
  request: 'hold' | 'release';
}

export type KeeperReport = { notice: string } | { ready: true } | { busy: true } | { failure: string };

export function send(socket: Socket, message: KeeperMessage | HolderMessage): void {
  if (socket.writable) socket.write(`${JSON.stringify(message)}\n`);
}

/** A line that is not JSON is ignored; the socket's own listeners deal with its errors (readline would re-emit them unhandled). */
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

export const EMBEDDED_DATABASE = 'spaceport';
