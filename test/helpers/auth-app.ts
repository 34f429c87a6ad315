import { systemAuthentication } from '../../lib/auth/system-auth.ts';
import { requestState } from '../../lib/core/request-state.ts';
import type { Runtime } from '../../lib/core/runtime.ts';
import { entryApp, listenApp, type ListeningApp } from './koa-app.ts';

export interface AuthApp extends ListeningApp {
  /** How many requests reached the handler behind the authentication. */
  handled: () => number;
}

/**
 * The real middlewares in the service's order, then a handler answering the authenticated uid
 * (`/fail` throws instead, to show a later failure is not turned into a 401).
 */
export async function startAuthApp(runtime: Runtime): Promise<AuthApp> {
  let handled = 0;
  const app = entryApp({
    logger: runtime.logger,
    runtime,
    tenant: true,
    steps: [
      systemAuthentication(runtime),
      (ctx) => {
        handled++;
        if (ctx.path === '/fail') throw new Error('handler failed');
        ctx.body = { uid: requestState(ctx).caller?.uid, claims: requestState(ctx).caller?.claims };
      },
    ],
  });
  return { ...(await listenApp(app)), handled: () => handled };
}
