import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP relay in front of PostgreSQL that a test can freeze (bytes stop, connections stay open:
 * the database "stops answering") or close (connections dropped: the database is gone).
 */
export interface DatabaseProxy {
  /** The database URL, pointed at the relay. */
  readonly url: string;
  /** From now on, nothing passes in either direction: the database "stops answering". */
  freeze(): void;
  /** Bytes held back while frozen are delivered, and traffic flows again. */
  thaw(): void;
  /** Stops accepting and drops every open connection. */
  close(): Promise<void>;
}

export async function databaseProxy(databaseUrl: string): Promise<DatabaseProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  const flushes: Array<() => void> = [];
  let frozen = false;
  let closed: Promise<void> | undefined;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    flushes.push(relay(client, upstream, () => frozen), relay(upstream, client, () => frozen));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const flush of flushes) flush();
    },
    close: () => {
      closed ??= new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}

/** Copies `from` to `to`, holding chunks back while `isFrozen()`; returns the function that flushes them. */
function relay(from: Socket, to: Socket, isFrozen: () => boolean): () => void {
  const held: Buffer[] = [];
  from.on('data', (chunk: Buffer) => {
    if (isFrozen()) held.push(chunk);
    else to.write(chunk);
  });
  return () => {
    for (const chunk of held.splice(0)) to.write(chunk);
  };
}
