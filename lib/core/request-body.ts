import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'koa';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import contentType from 'content-type';
import createError from 'http-errors';
import onFinished from 'on-finished';
import secureJson from 'secure-json-parse';
import { bodyError } from './errors.ts';

/** A Map: a coding named `constructor` or `__proto__` is unknown, not a way into Object. */
const DECODERS: ReadonlyMap<string, () => Transform> = new Map([
  ['gzip', createUnzip],
  ['deflate', createUnzip],
  ['br', createBrotliDecompress],
]);

/**
 * The body decoded as its `Content-Encoding` says (gzip, deflate, br; 415 for another coding), or the request itself.
 * The decoder keeps an error listener and is destroyed when the answer is done: a body cut short at the size limit
 * while the request still feeds the decoder must not fail after the answer, an uncaught exception.
 */
export function decodedBody(request: IncomingMessage, response: ServerResponse): Readable {
  const coding = contentCoding(request);
  if (coding === 'identity') return request;
  const decoder = DECODERS.get(coding)?.();
  if (decoder === undefined) throw createError(415, 'unsupported content encoding');
  decoder.on('error', () => {});
  request.pipe(decoder);
  onFinished(response, () => {
    request.unpipe(decoder);
    decoder.destroy();
  });
  return decoder;
}

/**
 * The whole of `body` within `limitBytes`: beyond, 413, and the stream is left paused rather than destroyed, so that
 * the answer can still be written. `declaredBytes` (a `Content-Length` of an unencoded body) refuses a body announced
 * too large before any of it is read.
 */
export function readBytes(body: Readable, limitBytes: number, declaredBytes?: number): Promise<Buffer> {
  if (declaredBytes !== undefined && declaredBytes > limitBytes) return Promise.reject(createError(413, 'request body too large'));
  // Its client gone while an earlier step waited: no event will come.
  if (body.destroyed || body.readableEnded || !body.readable) return Promise.reject(createError(400, 'request aborted'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const stop = (error: Error | undefined) => {
      body.off('data', onData).off('end', onEnd).off('error', stop).off('aborted', onAborted).off('close', onClose);
      if (error === undefined) return resolve(Buffer.concat(chunks, length));
      body.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limitBytes) stop(createError(413, 'request body too large'));
      else chunks.push(chunk);
    };
    const onEnd = () => stop(undefined);
    const onAborted = () => stop(createError(400, 'request aborted'));
    // A decoder destroyed with the answer (the client gone) closes without an end.
    const onClose = () => stop(createError(400, 'request aborted'));
    body.on('data', onData).on('end', onEnd).on('error', stop).on('aborted', onAborted).on('close', onClose);
  });
}

/** Its `Content-Length` when the body is sent as is. */
export function declaredLength(request: IncomingMessage): number | undefined {
  const length = request.headers['content-length'];
  return length === undefined || contentCoding(request) !== 'identity' ? undefined : Number(length);
}

/** The body's coding, lower case; an empty header is none, as for Express. */
function contentCoding(request: IncomingMessage): string {
  return (request.headers['content-encoding'] || 'identity').toLowerCase();
}

/**
 * JSON read as UTF-8 (a byte order mark dropped, as a decoder does), a `__proto__` key refused (its message names
 * it; `constructor.prototype` is an ordinary key). An empty body is `undefined`, which no JSON text is.
 */
function parseJsonBody(bytes: Buffer): unknown {
  const text = withoutByteOrderMark(bytes.toString('utf8'));
  return text === '' ? undefined : secureJson.parse(text, null, { protoAction: 'error', constructorAction: 'ignore' });
}

/**
 * RFC 8259 §8.1: JSON between systems is UTF-8. A body declared in another charset is refused (415,
 * naming it as Express's `json()` does) rather than read wrongly; Express would decode UTF-16 and UTF-32.
 */
function refuseOtherCharsets(request: IncomingMessage): void {
  const type = request.headers['content-type'];
  // Most bodies declare no charset: no parsing for them.
  if (type === undefined || !/charset/i.test(type)) return;
  const charset = declaredCharset(type);
  if (charset !== undefined && charset !== 'utf-8') throw createError(415, `unsupported charset "${charset.toUpperCase()}"`);
}

function declaredCharset(type: string): string | undefined {
  try {
    return contentType.parse(type).parameters.charset?.toLowerCase();
  } catch {
    return undefined;
  }
}

function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The body as JSON (`parseJsonBody`), decoded and read within `limitBytes`; what fails is a 400, 413 or 415.
 * `strict`: an object or an array only, an empty body `{}`; otherwise any JSON value.
 */
export async function readJsonBody(request: IncomingMessage, response: ServerResponse, limitBytes: number, strict: boolean): Promise<Request['body']> {
  refuseOtherCharsets(request);
  let value: unknown;
  try {
    value = parseJsonBody(await readBytes(decodedBody(request, response), limitBytes, declaredLength(request)));
  } catch (error) {
    throw bodyError(error as Error, 'malformed JSON body');
  }
  if (value === undefined) return strict ? {} : '';
  if (!strict) return value as Request['body'];
  // Well-formed JSON but another value: said as such, not as malformed.
  if (value === null || typeof value !== 'object') throw createError(400, 'JSON body must be an object or an array');
  return value as Request['body'];
}
