import mime from 'mime-types';

/** `text/html; q=0.5` is `text/html`; an extension name (`json`) is looked up, as Express does. */
export function bareType(key: string): string {
  if (!key.includes('/')) return mime.lookup(key) || 'application/octet-stream';
  const semicolon = key.indexOf(';');
  return (semicolon === -1 ? key : key.slice(0, semicolon)).trim();
}

/**
 * The callback name of a JSONP request, from the `callback` query parameter (the first when
 * repeated), reduced to the characters of a JavaScript name path; undefined when there is none.
 * Express checks for an empty name before reducing it, so `?callback=()` still gives a script.
 */
export function jsonpCallback(parameter: unknown): string | undefined {
  const first = Array.isArray(parameter) ? parameter[0] : parameter;
  if (typeof first !== 'string' || first.length === 0) return undefined;
  return first.replace(/[^[\]\w$.]/g, '');
}

/**
 * The JSONP script around a JSON text: `/**\/` against Rosetta Flash, a `typeof` test so a
 * missing function is no error, and U+2028/U+2029 escaped because JSON allows them and
 * JavaScript strings did not.
 */
export function jsonpScript(callback: string, json: string | undefined): string {
  const argument = json === undefined ? '' : json.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return `/**/ typeof ${callback} === 'function' && ${callback}(${argument});`;
}

/** The `Link` header after `res.links(links)`: earlier links kept, a rel may carry several targets. */
export function linkHeader(previous: unknown, links: Record<string, unknown>): string {
  const added = Object.entries(links)
    .map(([rel, targets]) => (Array.isArray(targets) ? targets : [targets]).map((target) => `<${target}>; rel="${rel}"`).join(', '))
    .join(', ');
  return previous ? `${previous}, ${added}` : added;
}
