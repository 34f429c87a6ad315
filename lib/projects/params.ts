import type { Layer } from '@koa/router';
import createError from 'http-errors';

/**
 * The pattern a declared path is registered under. Express's router drops the trailing slashes
 * of a declared path (`/items/` answers `/items` and `/items/`); @koa/router would insist on one.
 */
export function looseRoutePath(path: string): string {
  return path.replace(/\/+$/, '') || '/';
}

/**
 * `req.params` as Express 5's router gives them: a null-prototype object, every value
 * URI-decoded, a wildcard (`*rest`) as the array of its decoded segments, an optional part that
 * is absent left out. A value that does not decode is 400, before any step of the route runs.
 */
export function routeParams(layer: Layer, path: string): Record<string, string | string[]> {
  const captures = layer.captures(path);
  const params: Record<string, string | string[]> = Object.create(null);
  layer.paramNames.forEach((key, index) => {
    const value = captures[index];
    if (value === undefined) return;
    params[key.name] = key.type === 'wildcard' ? value.split('/').map(decodeParam) : decodeParam(value);
  });
  return params;
}

function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw createError(400, `Failed to decode param '${value}'`);
  }
}
