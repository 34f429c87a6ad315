import Koa from 'koa';
import { nothingAnswers } from './core/errors.ts';
import type { Runtime } from './core/runtime.ts';
import type { BodyPace } from './http/body-pace.ts';
import type { Area } from './core/area.ts';
import { withCrossOrigin } from './http/cors.ts';
import { requestEntry } from './http/entry.ts';
import { answeringServiceRoutes, SERVICE_AREAS, serviceArea } from './http/service-areas.ts';
import type { LoadedProjects } from './projects/index.ts';
import { withTenant } from './tenancy/index.ts';

/**
 * Composes the service: one entry that routes each request, by the first segment of its path,
 * to what answers that area, each area a router of declared routes. The system endpoints take
 * no tenant; everything else runs behind the tenant step, unknown paths included (an invalid
 * tenant is a 400 before a 404).
 */
export function createApp(runtime: Runtime, projects: LoadedProjects, bodyPace?: BodyPace): Koa {
  const routes = Object.freeze([...answeringServiceRoutes(runtime.config), ...projects.routes]);
  const parts = { runtime, routes: () => routes };
  const areas = new Map<string, Area>();
  for (const declared of SERVICE_AREAS) {
    const area = serviceArea(declared, parts);
    for (const segment of declared.segments) areas.set(segment, area);
  }
  areas.set('api', withCrossOrigin(runtime.config, projects.methodsOf ?? (() => []), withTenant(runtime, projects.area)));
  const otherwise = withTenant(runtime, (ctx) => {
    throw nothingAnswers(ctx.method);
  });
  // One trusted proxy: the client address is the last X-Forwarded-For entry, the one that proxy
  // appended; the entries before it are whatever the client sent.
  const app = new Koa({ proxy: runtime.config.http.trustProxy, maxIpsCount: 1 });
  app.silent = true;
  app.use(requestEntry({ logger: runtime.logger, runtime, areas, otherwise, bodyPace }));
  return app;
}
