import type { Server, Socket } from 'node:net';
import { type HolderMessage, type KeeperMessage, onMessages, send } from './embedded-lease.ts';

/**
 * The processes using the embedded server, each holding one connection to the keeper. The
 * kernel closes that connection when its process ends, however it ends (SIGKILL included), so
 * a lease can neither be forgotten nor outlive its holder. Processes that connect while the
 * server starts wait for it.
 */
export class Leases {
  readonly #holders = new Set<Socket>();
  readonly #releasing = new Set<Socket>();
  #onIdle: () => void = () => {};
  #state: 'starting' | 'serving' | 'stopping' = 'starting';
  #ready: KeeperMessage | undefined;

  constructor(server: Server) {
    server.on('connection', (socket) => this.#accept(socket));
  }

  /**
   * The server is up: each holder, those already waiting too, gets `ready`. When the last lease
   * ends, or none came within `graceMs`, `onIdle` runs, once.
   */
  serve(ready: KeeperMessage, graceMs: number, onIdle: () => void): void {
    this.#state = 'serving';
    this.#ready = ready;
    this.#onIdle = onIdle;
    for (const socket of this.#holders) send(socket, ready);
    setTimeout(() => this.#stopIfIdle(), graceMs).unref();
  }

  /** Tells every holder `message` and closes their leases; later callers are told to come back. */
  end(message: KeeperMessage): void {
    this.#state = 'stopping';
    for (const socket of [...this.#holders, ...this.#releasing]) {
      send(socket, message);
      socket.end();
    }
  }

  #accept(socket: Socket): void {
    socket.on('error', () => socket.destroy());
    if (this.#state === 'stopping') {
      send(socket, { event: 'stopping' });
      socket.end();
      return;
    }
    this.#holders.add(socket);
    if (this.#ready) send(socket, this.#ready);
    onMessages<HolderMessage>(socket, (message) => {
      if (message.request === 'release') this.#release(socket);
    });
    socket.on('close', () => {
      this.#holders.delete(socket);
      this.#releasing.delete(socket);
      this.#stopIfIdle();
    });
  }

  /** A holder leaving on purpose waits for the answer: `kept`, or `stopped` once the server is down. */
  #release(socket: Socket): void {
    if (!this.#holders.delete(socket)) return;
    this.#releasing.add(socket);
    if (this.#stopIfIdle()) return;
    this.#releasing.delete(socket);
    send(socket, { event: 'kept' });
    socket.end();
  }

  #stopIfIdle(): boolean {
    if (this.#state !== 'serving' || this.#holders.size > 0) return false;
    this.#state = 'stopping';
    this.#onIdle();
    return true;
  }
}
