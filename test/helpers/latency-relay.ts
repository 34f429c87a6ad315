import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** A TCP relay to PostgreSQL that delays every chunk, either way, by `delayMs`: a distant database. */
export async function latencyRelay(databaseUrl: string, delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const delayed = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), delayMs));
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(client);
    track(upstream);
    delayed(client, upstream);
    delayed(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
