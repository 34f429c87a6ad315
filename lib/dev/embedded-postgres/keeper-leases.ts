import type { Server, Socket } from 'node:net';
import { type HolderMessage, type KeeperMessage, onMessages, send } from './lease.ts';

/**
 * An open connection is a lease: the kernel closes it when its process ends, however (SIGKILL included), so a lease
 * can neither be forgotten nor outlive its holder. One that never says `hold` (another keeper checking) holds nothing.
 */
export class Leases {
  readonly #visitors = new Set<Socket>();
  readonly #holders = new Set<Socket>();
  readonly #releasing = new Set<Socket>();
  #onIdle: () => void = () => {};
  #state: 'starting' | 'serving' | 'stopping' = 'starting';
  #ready: KeeperMessage | undefined;

  constructor(server: Server) {
    server.on('connection', (socket) => this.#accept(socket));
  }

  /** `onIdle` runs once, when the last lease ends or none was taken within `graceMs`. */
  serve(ready: KeeperMessage, graceMs: number, onIdle: () => void): void {
    this.#state = 'serving';
    this.#ready = ready;
    this.#onIdle = onIdle;
    for (const socket of this.#visitors) send(socket, ready);
    setTimeout(() => this.#stopIfIdle(), graceMs).unref();
  }

  end(message: KeeperMessage): void {
    this.#state = 'stopping';
    for (const socket of [...this.#visitors, ...this.#holders, ...this.#releasing]) {
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
    this.#visitors.add(socket);
    if (this.#ready) send(socket, this.#ready);
    onMessages<HolderMessage>(socket, (message) => {
      if (message.request === 'hold') this.#hold(socket);
      else if (message.request === 'release') this.#release(socket);
    });
    socket.on('close', () => {
      this.#visitors.delete(socket);
      const held = this.#holders.delete(socket);
      this.#releasing.delete(socket);
      if (held) this.#stopIfIdle();
    });
  }

  /** Too late when the keeper is already stopping the server: then the visitor comes back later. */
  #hold(socket: Socket): void {
    if (!this.#visitors.delete(socket)) return;
    if (this.#state !== 'serving') {
      send(socket, { event: 'stopping' });
      socket.end();
      return;
    }
    this.#holders.add(socket);
    send(socket, { event: 'held' });
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
