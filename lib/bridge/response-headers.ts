import { EventEmitter } from 'node:events';
import path from 'node:path';
import { create as contentDisposition } from 'content-disposition';
import { serialize as serializeCookie, type SerializeOptions } from 'cookie';
import encodeUrl from 'encodeurl';
import type { Context } from 'koa';
import mime from 'mime-types';

export type HeaderValue = string | number | boolean | readonly (string | number | boolean)[];

export interface CookieOptions extends Omit<SerializeOptions, 'maxAge'> {
  /** Milliseconds, as in Express; sent as `Max-Age` seconds plus `Expires`. */
  maxAge?: number;
  signed?: boolean;
}

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
    if (this.headersOpen('vary')) this.context.vary(field);
    return this;
  }

  attachment(filename?: string): this {
    const name = filename === undefined ? undefined : path.basename(filename);
    if (name) this.type(path.extname(name));
    return this.set('Content-Disposition', contentDisposition(name));
  }

  cookie(name: string, value: unknown, options: CookieOptions = {}): this {
    if (options.signed) throw new Error('cookieParser("secret") required for signed cookies');
    const { maxAge, signed: _signed, ...rest } = options;
    const serializeOptions: SerializeOptions = { ...rest };
    if (maxAge != null && !Number.isNaN(Number(maxAge))) {
      serializeOptions.expires = new Date(Date.now() + Number(maxAge));
      serializeOptions.maxAge = Math.floor(Number(maxAge) / 1000);
    }
    serializeOptions.path ??= '/';
    const text = typeof value === 'object' ? `j:${JSON.stringify(value)}` : String(value);
    return this.append('Set-Cookie', serializeCookie(name, text, serializeOptions));
  }

  clearCookie(name: string, options: CookieOptions = {}): this {
    const { maxAge: _ignored, ...rest } = options;
    return this.cookie(name, '', { path: '/', ...rest, expires: new Date(1) });
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.headersOpen(`set ${name}`)) this.context.res.setHeader(name, value);
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
    if (this.headersOpen(`remove ${name}`)) this.context.res.removeHeader(name);
  }

  /** Whether headers may still change (`change` names the attempt, for a report when not). */
  protected headersOpen(_change: string): boolean {
    return !this.headersSent;
  }
}
