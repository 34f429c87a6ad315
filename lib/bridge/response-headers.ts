import { EventEmitter } from 'node:events';
import path from 'node:path';
import { create as contentDisposition } from 'content-disposition';
import encodeUrl from 'encodeurl';
import type { Context } from 'koa';
import mime from 'mime-types';
import { setCookieValue, type CookieOptions } from './cookies.ts';
import { linkHeader } from './response-formats.ts';

/** How a header changes: Node names it in the error it throws once the headers are out. */
export type HeaderChange = 'set' | 'remove';

export type HeaderValue = string | number | boolean | readonly (string | number | boolean)[];

/**
 * Status and header members of Express 5's `res`, written straight through to Koa's `ctx`.
 * The status stays here until the answer is committed: Koa starts every response at 404,
 * Express at 200, and a handler that sets a status and then calls `next()` must not leak it.
 */
export class ResponseHeaders extends EventEmitter {
  protected readonly context: Context;
  #statusCode = 200;

  constructor(context: Context) {
    super();
    this.context = context;
  }

  get statusCode(): number {
    return this.#statusCode;
  }

  set statusCode(code: number) {
    this.#statusCode = code;
  }

  /** True once the answer is committed: headers can no longer change. */
  get headersSent(): boolean {
    return this.context.res.headersSent;
  }

  status(code: number): this {
    if (!Number.isInteger(code)) {
      throw new TypeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be an integer.`);
    }
    if (code < 100 || code > 999) {
      throw new RangeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be greater than 99 and less than 1000.`);
    }
    this.#statusCode = code;
    return this;
  }

  set(field: string | Record<string, HeaderValue>, value?: HeaderValue): this {
    if (typeof field !== 'string') {
      for (const [name, each] of Object.entries(field)) this.set(name, each);
      return this;
    }
    let text: string | string[] = Array.isArray(value) ? value.map(String) : String(value);
    if (field.toLowerCase() === 'content-type') {
      if (Array.isArray(text)) throw new TypeError('Content-Type cannot be set to an Array');
      text = String(mime.contentType(text as string));
    }
    return this.setHeader(field, text);
  }

  header(field: string | Record<string, HeaderValue>, value?: HeaderValue): this {
    return this.set(field, value);
  }

  get(field: string): string | string[] | number | undefined {
    return this.getHeader(field);
  }

  append(field: string, value: string | string[]): this {
    const previous = this.get(field);
    if (previous === undefined || previous === '') return this.set(field, value);
    const earlier = Array.isArray(previous) ? previous : [String(previous)];
    return this.set(field, earlier.concat(value));
  }

  type(type: string): this {
    return this.set('Content-Type', type.includes('/') ? type : mime.contentType(type) || 'application/octet-stream');
  }

  contentType(type: string): this {
    return this.type(type);
  }

  location(url: string): this {
    return this.set('Location', encodeUrl(url));
  }

  vary(field: string | string[]): this {
    if (this.headersOpen('vary', 'set')) this.context.vary(field);
    return this;
  }

  attachment(filename?: string): this {
    const name = filename === undefined ? undefined : path.basename(filename);
    if (name) this.type(path.extname(name));
    return this.set('Content-Disposition', contentDisposition(name));
  }

  /** Adds a `Set-Cookie`; `signed: true` signs with the secret cookie-parser put on `req.secret`. */
  cookie(name: string, value: unknown, options: CookieOptions = {}): this {
    return this.append('Set-Cookie', setCookieValue(name, value, options, this.cookieSecret()));
  }

  clearCookie(name: string, options: CookieOptions = {}): this {
    const { maxAge: _ignored, ...rest } = options;
    return this.cookie(name, '', { path: '/', ...rest, expires: new Date(1) });
  }

  /** Adds to the `Link` header: `res.links({ next: url, last: [url, url] })`. */
  links(links: Record<string, string | readonly string[]>): this {
    return this.set('Link', linkHeader(this.get('Link'), links));
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.headersOpen(`set ${name}`, 'set')) this.context.res.setHeader(name, value);
    return this;
  }

  getHeader(name: string): string | string[] | number | undefined {
    return this.context.res.getHeader(name);
  }

  getHeaders(): Record<string, string | string[] | number | undefined> {
    return this.context.res.getHeaders();
  }

  getHeaderNames(): string[] {
    return this.context.res.getHeaderNames();
  }

  hasHeader(name: string): boolean {
    return this.context.res.hasHeader(name);
  }

  removeHeader(name: string): void {
    if (this.headersOpen(`remove ${name}`, 'remove')) this.context.res.removeHeader(name);
  }

  /** The secret signed cookies are signed with: none until a request is attached. */
  protected cookieSecret(): string | Buffer | undefined {
    return undefined;
  }

  /** Whether headers may still change (`change` names the attempt, for a report when not). */
  protected headersOpen(_change: string, _verb: HeaderChange): boolean {
    return !this.headersSent;
  }
}
