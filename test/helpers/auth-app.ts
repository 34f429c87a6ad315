import Koa from 'koa';
import { systemAuthentication } from '../../lib/auth/system-auth.ts';
import { errorHandler } from '../../lib/http/errors.ts';
import { requestLog } from '../../lib/http/request-log.ts';
import { requestState } from '../../lib/http/state.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { resolveTenant } from '../../lib/tenancy/index.ts';
import { listenApp, type ListeningApp } from './koa-app.ts';

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
  const app = new Koa();
  app.silent = true;
  app.use(requestLog(runtime.logger));
  app.use(errorHandler(runtime.logger));
  app.use(resolveTenant(runtime));
  app.use(systemAuthentication(runtime));
  app.use((ctx) => {
    handled++;
    if (ctx.path === '/fail') throw new Error('handler failed');
    ctx.body = { uid: requestState(ctx).uid, claims: requestState(ctx).claims };
  });
  return { ...(await listenApp(app)), handled: () => handled };
}
