import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/** A loopback TCP proxy that a test can cut, to take a dependency away from a running service. */
export interface TcpProxy {
  /** `url` with its host and port replaced by the proxy's. */
  readonly url: string;
  /** Stops accepting and drops every open connection. */
  cut(): Promise<void>;
}

export async function startTcpProxy(url: string): Promise<TcpProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const proxied = new URL(url);
  proxied.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: proxied.href,
    cut: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
