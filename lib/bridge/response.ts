import path from 'node:path';
import { create as contentDisposition } from 'content-disposition';
import encodeUrl from 'encodeurl';
import type { Context } from 'koa';
import statuses from 'statuses';
import type { Completions } from './completion.ts';
import { setCookieValue, type CookieOptions } from './cookies.ts';
import { downloadCall } from './download.ts';
import type { ExpressApplication } from './application.ts';
import { BridgeRequest } from './request.ts';
import { JSON_UTF8, redirectBody, weakEtag, withCharset } from './response-bodies.ts';
import { answerByFormat, jsonpCallback, jsonpScript, linkHeader, noViewEngine, type Formats } from './response-formats.ts';
import { appendedValue, checkedStatus, headerText, typeNamed, type HeaderValue } from './response-headers.ts';
import { ResponseStream } from './response-stream.ts';
import { transferFile, type SendFileCallback, type SendFileOptions } from './send-file.ts';

const HTML = 'text/html; charset=utf-8';
const OCTET_STREAM = 'application/octet-stream';

/**
 * Express 5's `res` over Koa's `ctx`, Express's methods over Node's (`ResponseStream`). As in
 * Node, every answer ends in `this.writeHead` and `this.end`/`this.write`, looked up when
 * called: middleware that replaces them (compression, express-session) sees every answer.
 */
export class BridgeResponse extends ResponseStream {
  /** Per request, shared by every bridged function of the request (custom auth, handler); no prototype, as in Express 5. */
  readonly locals: Record<string, unknown> = Object.create(null);
  readonly req: BridgeRequest<this>;
  readonly #context: Context;

  constructor(context: Context, completions: Completions) {
    super(context, completions);
    this.#context = context;
    this.req = new BridgeRequest(context, this);
  }

  /** The settings Express middleware reads (`trust proxy`, `env`), as `req.app`. */
  get app(): ExpressApplication {
    return this.req.app;
  }

  status(code: number): this {
    this.statusCode = checkedStatus(code);
    return this;
  }

  set(field: string | Record<string, HeaderValue>, value?: HeaderValue): this {
    if (typeof field === 'string') return this.setHeader(field, headerText(field, value));
    for (const [name, each] of Object.entries(field)) this.set(name, each);
    return this;
  }

  header(field: string | Record<string, HeaderValue>, value?: HeaderValue): this {
    return this.set(field, value);
  }

  get(field: string): string | string[] | number | undefined {
    return this.getHeader(field);
  }

  append(field: string, value: string | string[]): this {
    return this.set(field, appendedValue(this.get(field), value));
  }

  type(type: string): this {
    return this.set('Content-Type', typeNamed(type));
  }

  contentType(type: string): this {
    return this.type(type);
  }

  location(url: string): this {
    return this.set('Location', encodeUrl(url));
  }

  attachment(filename?: string): this {
    const name = filename === undefined ? undefined : path.basename(filename);
    if (name) this.type(path.extname(name));
    return this.set('Content-Disposition', contentDisposition(name));
  }

  /** Adds a `Set-Cookie`; `signed: true` signs with the secret cookie-parser put on `req.secret`. */
  cookie(name: string, value: unknown, options: CookieOptions = {}): this {
    const secret = this.req.secret;
    return this.append('Set-Cookie', setCookieValue(name, value, options, typeof secret === 'string' || Buffer.isBuffer(secret) ? secret : undefined));
  }

  clearCookie(name: string, options: CookieOptions = {}): this {
    const { maxAge: _ignored, ...rest } = options;
    return this.cookie(name, '', { path: '/', ...rest, expires: new Date(1) });
  }

  /** Adds to the `Link` header: `res.links({ next: url, last: [url, url] })`. */
  links(links: Record<string, string | readonly string[]>): this {
    return this.set('Link', linkHeader(this.get('Link'), links));
  }

  send(body?: unknown): this {
    if (!this.claim('send')) return this;
    let chunk: string | Buffer | undefined;
    if (typeof body === 'string') {
      const type = this.getHeader('Content-Type');
      if (typeof type !== 'string') this.setHeader('Content-Type', HTML);
      else if (withCharset(type) !== type) this.setHeader('Content-Type', withCharset(type));
      chunk = body;
    } else if (body === null) {
      chunk = '';
    } else if (ArrayBuffer.isView(body)) {
      if (!this.hasHeader('Content-Type')) this.setHeader('Content-Type', OCTET_STREAM);
      chunk = Buffer.isBuffer(body) ? body : Buffer.from(body as Uint8Array);
    } else if (typeof body === 'object' || typeof body === 'number' || typeof body === 'boolean') {
      return this.json(body);
    }
    return this.#sendChunk(chunk);
  }

  json(value?: unknown): this {
    if (!this.claim('json')) return this;
    const text: string | undefined = JSON.stringify(value);
    if (!this.hasHeader('Content-Type')) this.setHeader('Content-Type', JSON_UTF8);
    return this.send(text);
  }

  /**
   * Express 5's `res.jsonp`: a script calling `?callback=` with the JSON, or plain JSON without
   * one. Both say `X-Content-Type-Options: nosniff` unless the handler chose the type of the JSON.
   */
  jsonp(value?: unknown): this {
    if (!this.claim('jsonp')) return this;
    const json: string | undefined = JSON.stringify(value);
    if (!this.get('Content-Type')) this.set({ 'X-Content-Type-Options': 'nosniff', 'Content-Type': 'application/json' });
    const callback = jsonpCallback(this.req.query.callback);
    if (callback === undefined) return this.send(json);
    this.set({ 'X-Content-Type-Options': 'nosniff', 'Content-Type': 'text/javascript' });
    return this.send(jsonpScript(callback, json));
  }

  /**
   * Express 5's `res.format`: the answer for the type the client accepts best, `default` when
   * it accepts none of them, else 406 through `next` (with the types offered, as `error.types`).
   */
  format(formats: Formats<BridgeRequest<this>, this>): this {
    answerByFormat(this.req, this, formats);
    return this;
  }

  /** No view engine (SPEC §10): the error, saying what to use instead, goes to the callback if any, else is thrown. */
  render(_view: string, localsOrCallback?: object | ((error: Error) => void), callback?: (error: Error) => void): void {
    const done = typeof localsOrCallback === 'function' ? localsOrCallback : callback;
    if (!done) throw noViewEngine();
    done(noViewEngine());
  }

  sendStatus(code: number): this {
    if (!this.claim('sendStatus')) return this;
    const body = statuses.message[code] ?? String(code);
    this.status(code);
    this.type('txt');
    return this.send(body);
  }

  redirect(statusOrUrl: number | string, url?: string): void {
    if (!this.claim('redirect')) return;
    const status = url === undefined ? 302 : Number(statusOrUrl);
    const address = String(this.location(String(url ?? statusOrUrl)).get('Location'));
    const { type, body } = redirectBody(this.req.accepts(['text', 'html']) as string | false, status, address);
    this.vary('Accept');
    if (type) this.set('Content-Type', type);
    this.status(status);
    this.set('Content-Length', Buffer.byteLength(body));
    if (this.#context.method === 'HEAD') this.end();
    else this.end(body);
  }

  sendFile(filePath: string, optionsOrCallback?: SendFileOptions | SendFileCallback | null, callback?: SendFileCallback): void {
    const options = typeof optionsOrCallback === 'object' && optionsOrCallback !== null ? optionsOrCallback : {};
    const done = typeof optionsOrCallback === 'function' ? optionsOrCallback : callback;
    const target = {
      context: this.#context,
      response: this,
      next: (error?: unknown) => this.req.next(error),
      claim: () => this.claimFileTransfer(),
      release: (error: Error) => this.releaseFileTransfer(error),
    };
    transferFile(target, filePath, options, done);
  }

  /** Express 5's `download(path, [filename], [options], [callback])`: `sendFile` as an attachment. */
  download(
    filePath: string,
    filename?: string | SendFileOptions | SendFileCallback,
    options?: SendFileOptions | SendFileCallback,
    callback?: SendFileCallback,
  ): void {
    const call = downloadCall(filePath, filename, options, callback);
    this.sendFile(call.filePath, call.options, call.callback);
  }

  /**
   * Express's `send` from here on. The length is set here only when something reads it before
   * Koa sets it from the body: a HEAD, or middleware that replaced `end`/`write`/`writeHead`.
   */
  #sendChunk(chunk: string | Buffer | undefined): this {
    if (chunk !== undefined) {
      if (this.#context.method === 'HEAD' || this.wrapped()) this.setHeader('Content-Length', typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);
      if (!this.hasHeader('ETag')) this.setHeader('ETag', weakEtag(chunk));
    }
    if (this.req.fresh) this.status(304);
    if (this.statusCode === 204 || this.statusCode === 304) {
      for (const name of ['Content-Type', 'Content-Length', 'Transfer-Encoding']) this.removeHeader(name);
      chunk = '';
    } else if (this.statusCode === 205) {
      this.set('Content-Length', '0');
      this.removeHeader('Transfer-Encoding');
      chunk = '';
    }
    if (this.#context.method === 'HEAD') this.end();
    else this.end(chunk);
    return this;
  }
}
