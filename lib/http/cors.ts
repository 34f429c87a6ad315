import type { Context } from 'koa';
import type { Area } from '../core/area.ts';
import type { Config } from '../config/index.ts';
import { originAllowed, parseOriginEntry, type OriginEntry } from '../config/origins.ts';

type CorsSettings = NonNullable<Config['cors']>;

/** The methods a path of the area answers (GET, HEAD, POST...); none for a path it does not know. */
export type PathMethods = (path: string) => readonly string[];

/**
 * CORS for an area, when the configuration has `cors`. It runs before the tenant step and
 * authentication: a preflight carries no credentials, so it is answered here, 204, with the
 * path's methods. Every answer to an allowed origin, errors included, carries it as
 * `Access-Control-Allow-Origin`; another origin's request goes on as without `cors`.
 */
export function withCrossOrigin(config: Pick<Config, 'cors'>, methodsOf: PathMethods, area: Area): Area {
  const settings = config.cors;
  if (settings === undefined) return area;
  const entries = settings.origins.map((entry) => parseOriginEntry(entry) as OriginEntry);
  const exposed = settings.exposeHeaders.join(', ');
  return (ctx) => {
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    if (origin === '' || !originAllowed(entries, origin)) return area(ctx);
    ctx.set('Access-Control-Allow-Origin', origin);
    if (settings.credentials) ctx.set('Access-Control-Allow-Credentials', 'true');
    const methods = isPreflight(ctx) ? methodsOf(ctx.path) : [];
    if (methods.length > 0) return answerPreflight(ctx, methods, settings);
    if (exposed !== '') ctx.set('Access-Control-Expose-Headers', exposed);
    return area(ctx);
  };
}

function isPreflight(ctx: Context): boolean {
  return ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method') !== '';
}

/** The headers a preflight asks for are allowed: what the route accepts is for the route to decide. */
function answerPreflight(ctx: Context, methods: readonly string[], settings: CorsSettings): void {
  ctx.set('Access-Control-Allow-Methods', [...new Set(methods)].join(', '));
  const requested = ctx.get('Access-Control-Request-Headers');
  if (requested !== '') {
    ctx.set('Access-Control-Allow-Headers', requested);
    ctx.vary('Access-Control-Request-Headers');
  }
  if (settings.maxAge !== undefined) ctx.set('Access-Control-Max-Age', String(settings.maxAge));
  ctx.status = 204;
}
