import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { unlink } from 'node:fs/promises';
import createError from 'http-errors';
import type { Context, Middleware, Next } from 'koa';
import type { File as FormidableFile, Part as FormidablePart } from 'formidable';
import { HttpMethodEnum, koaBody } from 'koa-body';
import onFinished from 'on-finished';
import typeis from 'type-is';
import type { Config } from '../config/index.ts';
import { exchangeFor } from './handler.ts';

import { requestState } from '../core/request-state.ts';
import { bodyError } from '../core/errors.ts';
import { declaredLength, decodedBody, readBytes, readJsonBody } from '../core/request-body.ts';
import { OBJECT_PROTOTYPE_KEYS, uploadFolder, uploadsOf } from './uploads.ts';

type Limits = Config['limits'];

export interface BodyParserOptions {
  /** Where uploads wait until the response ends (default: a private folder of the process, see `uploadFolder`). */
  temporaryDirectory?: string;
}

/** Express parses a body whatever the method; so do we (a request without a body is skipped). */
const EVERY_METHOD = Object.values(HttpMethodEnum);

/**
 * Body parsing for project routes (SPEC §8.3): `fields` as Express 5's `json()`, `urlencoded()`
 * and `text()` do; `multipart` stores files in a temporary folder until the response ends.
 */
export function bodyParsers(limits: Limits, options: BodyParserOptions = {}): { fields: Middleware; fieldsWithBytes: Middleware; multipart: Middleware } {
  const fields = fieldParser(limits);
  return { fields, fieldsWithBytes: bytesKeeper(limits, fields), multipart: multipartParser(limits, options.temporaryDirectory) };
}

const FIELD_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'text/plain'];

/** `fields` for `rawBody`: the bytes kept as `req.rawBody`, then parsed from a replay: both see the same bytes. */
function bytesKeeper(limits: Limits, fields: Middleware): Middleware {
  return async (ctx, next) => {
    if (alreadyRead(ctx) || !typeis.hasBody(ctx.req) || !ctx.is(FIELD_TYPES)) return fields(ctx, next);
    const bytes = await readBytes(ctx.req, limits.jsonBytes, declaredLength(ctx.req)).catch((error: unknown) => {
      throw bodyError(error as Error, 'malformed request body');
    });
    exchangeFor(ctx).req.rawBody = bytes;
    const replay = Object.assign(Readable.from([bytes]), { headers: { ...ctx.req.headers, 'content-length': String(bytes.length) } });
    // The parser reads `ctx.req`; everything else it reads or sets goes to the real context.
    return fields(Object.create(ctx, { req: { value: replay } }) as Context, next);
  };
}

/** JSON read here (the service's own reader), forms and text by koa-body. */
function fieldParser(limits: Limits): Middleware {
  const parseFormOrText = koaBody({
    json: false,
    urlencoded: true,
    text: true,
    multipart: false,
    textTypes: ['text/plain'],
    formLimit: limits.jsonBytes,
    textLimit: limits.jsonBytes,
    parsedMethods: [...EVERY_METHOD],
    // Express 5's default (non-extended) form parser: qs with no nesting, so `a[b]` stays a key.
    queryString: { allowDots: false, allowPrototypes: true, depth: 0, strictDepth: true, arrayLimit: 1000, parameterLimit: 1000 },
    onError: (error) => {
      throw bodyError(error, 'malformed request body');
    },
  });
  return async (ctx, next) => {
    const state = requestState(ctx);
    // A request without a body, or of a type not read here, is left unread.
    if (alreadyRead(ctx) || !typeis.hasBody(ctx.req)) return next();
    const type = ctx.is(FIELD_TYPES);
    if (type === false || type === null) return next();
    if (type === 'application/json') {
      // Express 5's `json()`: an object or an array (strict).
      ctx.request.body = await readJsonBody(ctx.req, ctx.res, limits.jsonBytes, true);
    } else await parseFormOrText(decoded(ctx), async () => {});
    state.bodyRead = true;
    return next();
  };
}

/** The context koa-body reads, its `req` the decoded body (koa-body's own decoder loses its error listener at the limit). */
function decoded(ctx: Context): Context {
  const body = decodedBody(ctx.req, ctx.res);
  if (body === ctx.req) return ctx;
  const { 'content-encoding': _encoding, 'content-length': _length, ...headers } = ctx.req.headers;
  return Object.create(ctx, { req: { value: Object.assign(body, { headers }) } }) as Context;
}

function multipartParser(limits: Limits, chosenDirectory: string | undefined): Middleware {
  return (ctx, next) => {
    if (alreadyRead(ctx) || !ctx.is('multipart')) return next();
    requestState(ctx).bodyRead = true;
    return storeUploads(ctx, next, limits, chosenDirectory);
  };
}

/**
 * A body is read once: parsed already for a later route reached with `next()` (reading the spent
 * stream would wait for ever), or by a custom auth's own middleware (multer), whose result is the route's.
 */
function alreadyRead(ctx: Context): boolean {
  return requestState(ctx).bodyRead === true || ctx.req.readableDidRead;
}

async function storeUploads(ctx: Context, next: Next, limits: Limits, chosenDirectory: string | undefined): Promise<void> {
  const directory = await uploadFolder(chosenDirectory);
  const stored: Array<[string, FormidableFile]> = [];
  const parsing = parseMultipart(ctx, limits, directory, stored);
  onFinished(ctx.res, () => {
    void parsing.catch(() => {}).finally(() => removeFiles(stored.map(([, file]) => file.filepath)));
  });
  await parsing;
  requestState(ctx).uploads = uploadsOf(stored.filter(([, file]) => isChosenFile(file)));
  await next();
}

/** Parses with formidable (through koa-body), tracking every file it opens, finished or not. */
function parseMultipart(ctx: Context, limits: Limits, directory: string, stored: Array<[string, FormidableFile]>): Promise<void> {
  const parse = koaBody({
    json: false,
    urlencoded: false,
    text: false,
    multipart: true,
    parsedMethods: [...EVERY_METHOD],
    formidable: {
      uploadDir: directory,
      maxFileSize: limits.fileBytes,
      maxTotalFileSize: limits.fileBytes * limits.files,
      maxFiles: limits.files,
      maxFieldsSize: limits.jsonBytes,
      allowEmptyFiles: true,
      minFileSize: 0,
      hashAlgorithm: 'md5',
      onPart: leaveOutPrototypeFields,
      onFileBegin: (field, file) => {
        stored.push([field, file]);
        stopWhenTooLarge(file, limits.fileBytes);
      },
    },
    onError: (error) => {
      throw bodyError(error, 'malformed multipart body');
    },
  });
  return parse(ctx, async () => {
    delete (ctx.request.body as Record<string, unknown> | undefined)?.[LEFT_OUT_FIELD];
  });
}

/**
 * The name a text field named like a member of `Object.prototype` is read under, then removed:
 * formidable would give its fields object a prototype of `__proto__`'s value, whose members
 * koa-body copies into the body; read, its bytes still count toward `limits.jsonBytes`.
 */
const LEFT_OUT_FIELD = `\u0000left out ${randomUUID()}`;

function leaveOutPrototypeFields(part: FormidablePart, handle: (part: FormidablePart) => void): void {
  if (!part.mimetype && part.name !== null && OBJECT_PROTOTYPE_KEYS.has(part.name)) part.name = LEFT_OUT_FIELD;
  handle(part);
}

/** Formidable checks a file's size only once it is complete; stop writing as soon as it is over. */
function stopWhenTooLarge(file: FormidableFile, limitBytes: number): void {
  // Formidable's files are event emitters (its types leave that out); an 'error' aborts the parse.
  const events = file as unknown as EventEmitter;
  events.on('progress', (size: number) => {
    if (size > limitBytes) events.emit('error', createError(413, 'file too large'));
  });
}

/** A browser sends an unnamed, empty part for a file input left empty: no file was chosen. */
function isChosenFile(file: FormidableFile): boolean {
  return Boolean(file.originalFilename) || file.size > 0;
}

async function removeFiles(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((each) => unlink(each).catch(() => {})));
}
