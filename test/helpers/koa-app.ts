import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type Koa from 'koa';
import { createLogger, type Logger } from '../../lib/http/logger.ts';

export interface ListeningApp {
  url: string;
  close: () => Promise<void>;
}

/** Listens on an ephemeral loopback port; `close` drops open connections too. */
export async function listenOnLoopback(server: Server): Promise<ListeningApp> {
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

/** Serves a Koa app on an ephemeral loopback port. */
export function listenApp(app: Koa): Promise<ListeningApp> {
  return listenOnLoopback(createServer(app.callback()));
}

/** The service's logger writing into `lines`, one raw JSON line per entry, for tests to read. */
export function collectingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write: (chunk, _encoding, done) => {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}
