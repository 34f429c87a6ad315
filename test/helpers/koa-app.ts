import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface ListeningApp {
  url: string;
  close: () => Promise<void>;
}

/** Serves a Koa app on an ephemeral loopback port. */
export async function listenApp(app: Koa): Promise<ListeningApp> {
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
