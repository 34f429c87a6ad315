import createError from 'http-errors';
import type { Middleware } from 'koa';

export interface RefererSettings {
  readonly allow: readonly string[];
  readonly allowMissing: boolean;
}

/** SPEC §3, §8.3: every Referer or Origin sent must be allowed; neither passes only when `allowMissing`. */
export function refererValidation(settings: RefererSettings): Middleware {
  const isAllowed = hostMatcher(settings.allow);
  return async (ctx, next) => {
    const sent = [ctx.get('Origin'), ctx.get('Referer')].filter((value) => value !== '');
    if (sent.length === 0) {
      if (!settings.allowMissing) throw createError(403, 'a Referer or Origin header is required');
    } else if (!sent.every((value) => isAllowed(hostOf(value)))) {
      throw createError(403, 'referer not allowed');
    }
    await next();
  };
}

/** `*.example.com` allows subdomains at any depth (not `example.com`); `localhost:8080` allows that port only. */
export function hostMatcher(allow: readonly string[]): (host: HostName | undefined) => boolean {
  const entries = allow.map((entry) => entry.trim().toLowerCase());
  return (host) => host !== undefined && entries.some((entry) => entryAllows(entry, host));
}

export interface HostName {
  readonly hostname: string;
  /** `hostname:port` when the URL names a port. */
  readonly host: string;
}

function entryAllows(entry: string, { hostname, host }: HostName): boolean {
  const candidate = entry.includes(':') ? host : hostname;
  if (entry.startsWith('*.')) return candidate.endsWith(entry.slice(1));
  return candidate === entry;
}

/** The host of an absolute http(s) URL; anything else (`null`, a bare path) has none. */
function hostOf(value: string): HostName | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return { hostname: url.hostname, host: url.host };
}
