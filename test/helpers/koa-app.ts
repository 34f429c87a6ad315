import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { createLogger, type Logger } from '../../lib/logger/index.ts';
import type { Runtime } from '../../lib/core/runtime.ts';
import type { Area } from '../../lib/core/area.ts';
import { entryKoa } from '../../lib/app.ts';
import { withTenant } from '../../lib/tenancy/index.ts';
import { collectLogs, type CollectedLogs } from '../../lib/testing/logs.ts';

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

/** The service's logger writing into `logs` (`spaceport/testing`'s collector), for tests to read. */
export function collectingLogger(): { logger: Logger; logs: CollectedLogs } {
  const logs = collectLogs();
  return { logger: createLogger('info', logs.destination), logs };
}

export interface EntryAppOptions {
  logger: Logger;
  runtime?: Runtime;
  /** Koa middleware behind the entry (and the tenant step, with `tenant`), in order. */
  steps?: Middleware[];
  /** Or an area answering every URL itself. */
  area?: Area;
  /** Runs the tenant step (SPEC §4.1) before the steps. */
  tenant?: boolean;
  /** `http.trustProxy`. */
  proxy?: boolean;
}

/**
 * The service's own Koa app (`entryKoa` of lib/app.ts: the real entry with its request id, state,
 * log line and error answers) in front of the given steps, for tests of one step at a time.
 */
export function entryApp({ logger, runtime, steps = [], area, tenant = false, proxy = false }: EntryAppOptions): Koa {
  const chain = compose(steps);
  let answer: Area = area ?? ((ctx) => chain(ctx, async () => {}));
  if (tenant) {
    if (runtime === undefined) throw new Error('entryApp: the tenant step needs a runtime');
    answer = withTenant(runtime, answer);
  }
  return entryKoa({ logger, runtime, areas: new Map(), otherwise: answer }, proxy);
}
