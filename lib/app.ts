import Koa from 'koa';
import { authRoutes } from './auth/index.ts';
import { errorHandler } from './http/errors.ts';
import { requestLog } from './http/request-log.ts';
import { systemRoutes } from './http/system-routes.ts';
import type { LoadedProjects } from './projects/index.ts';
import type { Runtime } from './runtime.ts';
import { spacesRoutes } from './spaces/index.ts';
import { resolveTenant } from './tenancy/index.ts';

/** Composes the service: logging, errors, tenant-free endpoints, then everything tenant-scoped. */
export function createApp(runtime: Runtime, projects: LoadedProjects): Koa {
  const app = new Koa({ proxy: runtime.config.http.trustProxy });
  app.silent = true;
  app.use(requestLog(runtime.logger));
  app.use(errorHandler(runtime.logger));
  app.use(systemRoutes(runtime, projects.routes));
  app.use(resolveTenant(runtime));
  app.use(authRoutes(runtime));
  app.use(spacesRoutes(runtime));
  app.use(projects.middleware);
  return app;
}
