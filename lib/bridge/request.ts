import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import querystring, { type ParsedUrlQuery } from 'node:querystring';
import accepts from 'accepts';
import fresh from 'fresh';
import type { Context } from 'koa';
import rangeParser from 'range-parser';
import { requestState, type ExpressRoute } from '../core/request-state.ts';
import { expressApplication, type ExpressApplication } from './application.ts';
import { RequestStream } from './request-stream.ts';
import type { NextFunction } from './types.ts';
import type { UploadedFiles } from './uploads.ts';

/** What `req.fresh` reads of the response: its status and the validators it will be sent with. */
export interface ResponseValidators {
  readonly statusCode: number;
  get(field: string): string | string[] | number | undefined;
}

/**
 * Express 5's `req` over Koa's `ctx`, for project handlers and custom auth (SPEC §10). Paths are
 * those of an Express router mounted at the project prefix: `baseUrl` is the prefix as it
 * appeared in the URL, `url` and `path` are relative to it, `originalUrl` is the whole URL.
 * Members a handler may assign in Express (`body`, `params`, `url`, `method`, `uid`) can be
 * assigned here too; `query` is read-only, as in Express 5. Anything else a custom auth adds
 * (`req.user`) is seen by the handler: one `req` serves the whole request. As a stream it is
 * Node's own request (`RequestStream`): a body the service parsed reads as consumed.
 */
export class BridgeRequest<Response extends ResponseValidators = ResponseValidators> extends RequestStream {
  [member: string]: unknown;
  readonly res: Response;
  /** The running function's `next`, as Express keeps it on `req`. */
  next: NextFunction = () => {};
  readonly #context: Context;
  readonly #assigned = new Map<string, unknown>();

  constructor(context: Context, response: Response) {
    super(context.req);
    this.#context = context;
    this.res = response;
  }

  declare body: unknown;
  /** The body was parsed: body-parser 1.x skips a body so marked (2 sees the stream ended); a reader sets it. */
  declare _body: boolean;
  /** Route parameters, decoded; a wildcard (`*rest`) is the array of its segments; no prototype, as in Express 5. */
  declare params: Record<string, string | string[]>;
  declare url: string;
  declare method: string;
  /** The authenticated account's id (system JWT `uid`), unless a custom auth set its own. */
  declare uid: string | undefined;
  /**
   * The claims of the verified system JWT (`uid`, `tenant`, `username`, `role`, `iat`, `exp`),
   * frozen; none on a route without system authentication, unless its code sets its own (as
   * express-jwt does).
   */
  declare auth: Readonly<Record<string, unknown>> | undefined;

  /** The members above: the request's own until the handler assigns one. */
  static {
    const members: Record<string, (request: BridgeRequest) => unknown> = {
      body: (request) => request.#context.request.body,
      _body: (request) => requestState(request.#context).bodyRead === true,
      params: (request) => requestState(request.#context).route?.params ?? Object.create(null),
      url: (request) => relativeUrl(request.#context.originalUrl, request.baseUrl),
      method: (request) => request.#context.method,
      uid: (request) => requestState(request.#context).caller?.uid,
      auth: (request) => requestState(request.#context).caller?.claims,
    };
    for (const [member, read] of Object.entries(members)) {
      Object.defineProperty(BridgeRequest.prototype, member, {
        configurable: true,
        get(this: BridgeRequest) {
          return this.#assigned.has(member) ? this.#assigned.get(member) : read(this);
        },
        set(this: BridgeRequest, value: unknown) {
          this.#assigned.set(member, value);
        },
      });
    }
  }

  /** Node's `querystring` (Express's "simple" parser): repeated keys are arrays, `a[b]` stays a key. */
  get query(): ParsedUrlQuery {
    const search = this.url.indexOf('?');
    return querystring.parse(search === -1 ? '' : this.url.slice(search + 1));
  }

  /** The route now running: its declared `path` and its `methods` (`{ get: true }`). */
  get route(): ExpressRoute | undefined {
    return requestState(this.#context).route?.route;
  }

  get headers(): IncomingHttpHeaders {
    return this.#context.request.headers;
  }

  /** The application's settings, as Express middleware reads them (`req.app.get('trust proxy')`). */
  get app(): ExpressApplication {
    return expressApplication(this.#context.app);
  }

  /** Uploaded files by field; null for a multipart request without files, else undefined. */
  get files(): UploadedFiles | null | undefined {
    return requestState(this.#context).uploads;
  }

  get baseUrl(): string {
    return requestState(this.#context).route?.baseUrl ?? '';
  }

  get originalUrl(): string {
    return this.#context.originalUrl;
  }

  get path(): string {
    const url = this.url;
    const end = url.search(/[?#]/);
    return end === -1 ? url : url.slice(0, end);
  }

  /** The client address: the socket's, or `X-Forwarded-For`'s when `http.trustProxy` is on. */
  get ip(): string {
    return this.#context.ip;
  }

  get ips(): string[] {
    return this.#context.ips;
  }

  get protocol(): string {
    return this.#context.protocol;
  }

  get secure(): boolean {
    return this.protocol === 'https';
  }

  get host(): string | undefined {
    return this.#context.host || undefined;
  }

  get hostname(): string | undefined {
    const host = this.host;
    if (!host) return undefined;
    const offset = host.startsWith('[') ? host.indexOf(']') + 1 : 0;
    const colon = host.indexOf(':', offset);
    return colon === -1 ? host : host.slice(0, colon);
  }

  get subdomains(): string[] {
    const hostname = this.hostname;
    if (!hostname) return [];
    return (isIP(hostname) ? [hostname] : hostname.split('.').reverse()).slice(2);
  }

  get xhr(): boolean {
    return (this.get('X-Requested-With') ?? '').toString().toLowerCase() === 'xmlhttprequest';
  }

  /** Whether the client's cached copy (If-None-Match / If-Modified-Since) is still good. */
  get fresh(): boolean {
    if (this.method !== 'GET' && this.method !== 'HEAD') return false;
    const status = this.res.statusCode;
    if ((status < 200 || status >= 300) && status !== 304) return false;
    return fresh(this.headers, { etag: this.res.get('ETag'), 'last-modified': this.res.get('Last-Modified') });
  }

  get stale(): boolean {
    return !this.fresh;
  }

  /** A request header, case-insensitively; Referer and Referrer are one. */
  get(name: string): string | string[] | undefined {
    if (!name) throw new TypeError('name argument is required to req.get');
    if (typeof name !== 'string') throw new TypeError('name must be a string to req.get');
    const lower = name.toLowerCase();
    if (lower === 'referer' || lower === 'referrer') return this.headers.referrer ?? this.headers.referer;
    return this.headers[lower];
  }

  header(name: string): string | string[] | undefined {
    return this.get(name);
  }

  is(...types: Array<string | string[]>): string | false | null {
    return this.#context.is(types.flat());
  }

  /** Content negotiation with `accepts` 2, the version Express 5 uses (Koa's own is older). */
  accepts(...types: Array<string | string[]>): string | string[] | false {
    return accepts(this.#context.req).types(types.flat());
  }

  acceptsEncodings(...encodings: Array<string | string[]>): string | string[] | false {
    return accepts(this.#context.req).encodings(encodings.flat());
  }

  acceptsCharsets(...charsets: Array<string | string[]>): string | string[] | false {
    return accepts(this.#context.req).charsets(charsets.flat());
  }

  acceptsLanguages(...languages: Array<string | string[]>): string | string[] | false {
    return accepts(this.#context.req).languages(languages.flat());
  }

  range(size: number, options?: rangeParser.Options): rangeParser.Result | rangeParser.Ranges | undefined {
    const range = this.get('Range');
    return typeof range === 'string' && range ? rangeParser(size, range, options) : undefined;
  }
}

/** The URL as a router mounted at `baseUrl` sees it: the mount removed, always from `/`. */
function relativeUrl(originalUrl: string, baseUrl: string): string {
  if (!baseUrl || !originalUrl.toLowerCase().startsWith(baseUrl.toLowerCase())) return originalUrl;
  const rest = originalUrl.slice(baseUrl.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}
