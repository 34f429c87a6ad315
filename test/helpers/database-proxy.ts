import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP relay in front of PostgreSQL that a test can freeze (bytes stop, connections stay open:
 * the database "stops answering"), cut (connections reset, new ones refused), black-hole
 * (connections accepted and kept, nothing ever forwarded) or close (connections dropped: the
 * database is gone).
 */
export interface DatabaseProxy {
  /** The database URL, pointed at the relay. */
  readonly url: string;
  /** From now on, nothing passes in either direction: the database "stops answering". */
  freeze(): void;
  /** Bytes held back while frozen are delivered, and traffic flows again. */
  thaw(): void;
  /** Resets every open connection, and every new one until `restore()`: the database is gone. */
  cut(): void;
  /**
   * From now on every byte is dropped, in both directions, on open connections and on new ones
   * (accepted, kept open, never connected to the database), until `restore()`.
   */
  blackHole(): void;
  /**
   * Traffic flows again for new connections. Connections that lived through a black hole lost
   * bytes and can never be in step again: they are reset, as a firewall that forgot them would.
   */
  restore(): void;
  /** Stops accepting and drops every open connection. */
  close(): Promise<void>;
  /** How many connections clients opened through the relay so far, and how many are open now. */
  connections(): { opened: number; open: number };
}

type Mode = 'pass' | 'frozen' | 'cut' | 'black-hole';

export async function databaseProxy(databaseUrl: string): Promise<DatabaseProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  const flushes = new Set<() => void>();
  let mode: Mode = 'pass';
  let closed: Promise<void> | undefined;
  const clients = new Set<Socket>();
  let opened = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    track(client);
    opened++;
    clients.add(client);
    client.on('close', () => clients.delete(client));
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'black-hole') {
      client.on('data', () => {});
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    const flushUp = relay(client, upstream, () => mode);
    const flushDown = relay(upstream, client, () => mode);
    flushes.add(flushUp).add(flushDown);
    client.on('close', () => {
      flushes.delete(flushUp);
      flushes.delete(flushDown);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  const resetAll = () => {
    for (const socket of sockets) socket.resetAndDestroy();
  };
  return {
    url: url.toString(),
    freeze: () => {
      mode = 'frozen';
    },
    thaw: () => {
      mode = 'pass';
      for (const flush of flushes) flush();
    },
    cut: () => {
      mode = 'cut';
      resetAll();
    },
    blackHole: () => {
      mode = 'black-hole';
    },
    restore: () => {
      if (mode === 'black-hole') resetAll();
      mode = 'pass';
    },
    connections: () => ({ opened, open: clients.size }),
    close: () => {
      closed ??= new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}

/**
 * Copies `from` to `to`: holding chunks back while frozen, dropping them in a black hole.
 * Returns the function that delivers what was held.
 */
function relay(from: Socket, to: Socket, currentMode: () => Mode): () => void {
  const held: Buffer[] = [];
  from.on('data', (chunk: Buffer) => {
    const mode = currentMode();
    if (mode === 'frozen') held.push(chunk);
    else if (mode === 'pass') to.write(chunk);
  });
  return () => {
    for (const chunk of held.splice(0)) to.write(chunk);
  };
}
