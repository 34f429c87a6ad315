import createError from 'http-errors';
import mime from 'mime-types';

/**
 * The answers of `res.format`, by type or extension name, and `default`. Each is called as a
 * method of this object (so `this` is the object, as in Express) with `req`, `res` and `next`.
 */
export type Formats<Request, Response> = Record<string, (req: Request, res: Response, next: (error?: unknown) => void) => void>;

/** What negotiation needs of `req` and `res`. */
interface NegotiatingRequest {
  readonly next: (error?: unknown) => void;
  accepts(types: string[]): string | string[] | false;
}
interface NegotiatingResponse {
  vary(field: string): unknown;
  set(field: string, value: string): unknown;
}

/** Express 5's `res.format` (see `BridgeResponse#format`); the chosen bare type is the Content-Type. */
export function answerByFormat<Request extends NegotiatingRequest, Response extends NegotiatingResponse>(
  req: Request,
  res: Response,
  formats: Formats<Request, Response>,
): void {
  const keys = Object.keys(formats).filter((key) => key !== 'default');
  const chosen = keys.length > 0 ? req.accepts(keys) : false;
  res.vary('Accept');
  if (typeof chosen === 'string') {
    res.set('Content-Type', bareType(chosen));
    formats[chosen](req, res, req.next);
  } else if (formats.default) {
    formats.default(req, res, req.next);
  } else {
    req.next(createError(406, { types: keys.map(bareType) }));
  }
}

/** `text/html; q=0.5` is `text/html`; an extension name (`json`) is looked up, as Express does. */
function bareType(key: string): string {
  if (!key.includes('/')) return mime.lookup(key) || 'application/octet-stream';
  const semicolon = key.indexOf(';');
  return (semicolon === -1 ? key : key.slice(0, semicolon)).trim();
}

/** `?callback=` (the first if repeated) reduced to a name path; checked for emptiness first, as Express does. */
export function jsonpCallback(parameter: unknown): string | undefined {
  const first = Array.isArray(parameter) ? parameter[0] : parameter;
  if (typeof first !== 'string' || first.length === 0) return undefined;
  return first.replace(/[^[\]\w$.]/g, '');
}

/**
 * `/**\/` against Rosetta Flash, a `typeof` test so a missing function is no error, U+2028/U+2029
 * escaped because JSON allows them and JavaScript strings did not.
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

/** What `res.render` fails with: there is no view engine (SPEC §10), and what to write instead. */
export function noViewEngine(): Error {
  return new Error(
    'res.render is not available: spaceport has no view engine. Build the HTML in the handler and answer it with res.send(html), or answer a static page with res.sendFile(path)',
  );
}
