import { readFile } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import etag from 'etag';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import type { RouteCase } from './bridge-apps.ts';

export const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'bridge');
const HELLO = path.join(FIXTURES, 'hello.txt');

/** The 500 body of SPEC §7 for an error the handler did not catch. */
export const INTERNAL_ERROR = { success: false, message: 'Internal Server Error' };

/**
 * One handler case: the route both apps serve, the request sent to both, and, where Express
 * renders an HTML error page, the JSON answer spaceport gives instead (by design, SPEC §10).
 */
export interface DifferentialCase {
  readonly name: string;
  readonly method?: RouteCase['method'];
  /** The route path under the mount; a case's own slug is prefixed to keep routes apart. */
  readonly path?: string;
  readonly handlers: RouteHandler[];
  /** The request path under the mount (default: the route path) and its options. */
  readonly request?: { path?: string; init?: RequestInit };
  /** Headers compared beyond status, Content-Type, body and Location. */
  readonly headers?: readonly string[];
  /** Express answers an HTML page here; spaceport answers this JSON body at the same status. */
  readonly spaceportJson?: unknown;
  /** The status both must give, where the case exists to show it. */
  readonly status?: number;
  /** The mount as spelt in the request URL (default `MOUNT`): mounts match in any case. */
  readonly mountAs?: string;
  /** A second route at the same path, declared after the case's own: what `next('route')` reaches. */
  readonly nextRoute?: RouteHandler;
}

/** fetch marks a conditional request `Cache-Control: no-cache` (which defeats it) unless one is given. */
export const conditional = (validator: string): Record<string, string> => ({ 'if-none-match': validator, 'cache-control': 'max-age=0' });

const only = (handler: RouteHandler): RouteHandler[] => [handler];

const FILE_HEADERS = ['content-length', 'accept-ranges', 'cache-control', 'last-modified', 'etag', 'content-range'];

export const RESPONSE_CASES: DifferentialCase[] = [
  { name: 'res.status(201).json(object)', status: 201, handlers: only((_req, res) => res.status(201).json({ ok: true })), headers: ['content-length', 'etag'] },
  { name: 'res.json(undefined) is an empty JSON answer', handlers: only((_req, res) => res.json(undefined)), headers: ['content-length'] },
  { name: 'res.json(null)', handlers: only((_req, res) => res.json(null)) },
  { name: 'res.json(42)', handlers: only((_req, res) => res.json(42)) },
  { name: 'res.json(string)', handlers: only((_req, res) => res.json('hi')) },
  { name: 'res.send(string) is HTML', handlers: only((_req, res) => res.send('hello')), headers: ['content-length', 'etag'] },
  { name: 'res.send(Buffer) is octet-stream', handlers: only((_req, res) => res.send(Buffer.from([1, 2, 3, 250]))), headers: ['content-length'] },
  { name: 'res.send(Buffer) keeps a type set before', handlers: only((_req, res) => res.set('Content-Type', 'image/png').send(Buffer.from('png'))) },
  { name: 'res.send(Uint8Array)', handlers: only((_req, res) => res.send(new Uint8Array([104, 105]))) },
  { name: 'res.send(object) is JSON', handlers: only((_req, res) => res.send({ a: [1, 'two'] })) },
  { name: 'res.send(number) is JSON, status untouched', status: 200, handlers: only((_req, res) => res.send(404)) },
  { name: 'res.send(true) is JSON', handlers: only((_req, res) => res.send(true)) },
  { name: 'res.send() is empty, untyped', handlers: only((_req, res) => res.send()), headers: ['content-length'] },
  { name: 'res.send(null) is 200 empty, untyped', status: 200, handlers: only((_req, res) => res.send(null)), headers: ['content-length'] },
  { name: 'res.status(204).send(text) drops type and body', status: 204, handlers: only((_req, res) => res.status(204).send('x')), headers: ['content-length'] },
  { name: 'res.status(205).send(text) empties the body', status: 205, handlers: only((_req, res) => res.status(205).send('x')), headers: ['content-length'] },
  { name: 'an unusual status', handlers: only((_req, res) => res.status(299).send('odd')) },
  {
    name: 'a matching If-None-Match is 304', status: 304,
    handlers: only((_req, res) => res.send('cache me')),
    request: { init: { headers: conditional(etag(Buffer.from('cache me'), { weak: true })) } },
    headers: ['etag'],
  },
  { name: 'HEAD of a GET route: same headers, no body', handlers: only((_req, res) => res.send('hello')), request: { init: { method: 'HEAD' } }, headers: ['content-length', 'etag'] },
  { name: 'res.redirect(url) encodes and answers text', status: 302, handlers: only((_req, res) => res.redirect('/a b?x=ü')), headers: ['vary', 'content-length'] },
  { name: 'res.redirect(301, url)', status: 301, handlers: only((_req, res) => res.redirect(301, 'https://example.com/next')) },
  { name: 'res.redirect answers HTML to an HTML client', handlers: only((_req, res) => res.redirect('/<b>')), request: { init: { headers: { accept: 'text/html' } } } },
  { name: 'res.redirect answers nothing to a JSON client', handlers: only((_req, res) => res.redirect('/json')), request: { init: { headers: { accept: 'application/json' } } } },
  { name: 'res.sendStatus(418)', status: 418, handlers: only((_req, res) => res.sendStatus(418)) },
  { name: 'res.sendStatus of an unnamed status', handlers: only((_req, res) => res.sendStatus(299)) },
  { name: 'res.type(json) looks up by extension', handlers: only((_req, res) => res.type('json').send('{"a":1}')) },
  { name: 'res.set(Content-Type) adds a charset', handlers: only((_req, res) => res.set('Content-Type', 'text/plain').send('plain')) },
  { name: 'res.json keeps a JSON type set before', handlers: only((_req, res) => res.type('application/vnd.api+json').json({ data: [] })) },
  {
    name: 'res.set(object), res.get any case, res.append',
    handlers: only((_req, res) => {
      res.set({ 'X-One': 1, 'X-Two': ['a', 'b'] }).append('X-Two', 'c').header('X-Three', 'three');
      res.json({ one: res.get('x-ONE'), two: res.get('X-Two'), missing: res.get('X-None') ?? 'none' });
    }),
    headers: ['x-one', 'x-two', 'x-three'],
  },
  { name: 'res.location, res.vary', handlers: only((_req, res) => res.location('/somewhere else').vary('Origin').vary('Accept').status(201).end()), headers: ['vary'] },
  {
    name: 'res.cookie: defaults, objects, maxAge; res.clearCookie',
    handlers: only((_req, res) => {
      res.cookie('plain', 'a b;c').cookie('object', { n: 1 }, { httpOnly: true }).cookie('timed', 'x', { maxAge: 90_000, sameSite: 'strict' });
      res.clearCookie('gone').send('cookies');
    }),
    headers: ['set-cookie'],
  },
  { name: 'res.attachment(name) sets type and disposition', handlers: only((_req, res) => res.attachment('folder/report.pdf').send(Buffer.from('%PDF'))), headers: ['content-disposition'] },
  { name: 'res.end(text) is untyped', handlers: only((_req, res) => res.end('raw text')), headers: ['content-length'] },
  { name: 'res.writeHead then res.end', handlers: only((_req, res) => res.writeHead(201, { 'X-Head': 'yes' }).end('made')), headers: ['x-head'] },
  {
    name: 'res.write pieces then res.end, headersSent live',
    handlers: only((_req, res) => {
      res.write(`before:${res.headersSent};`);
      res.write(Buffer.from('bytes;'));
      res.end(`after:${res.headersSent}`);
    }),
  },
  {
    name: 'res.write from a timer, with a type',
    handlers: only((_req, res) => {
      res.type('text');
      res.write('one,');
      setTimeout(() => res.end('two'), 15);
    }),
  },
  { name: 'readable.pipe(res)', handlers: only((_req, res) => Readable.from(['alpha,', 'beta,', 'gamma']).pipe(res as unknown as NodeJS.WritableStream)) },
  {
    name: 'HEAD of a streamed answer: headers only',
    handlers: only((_req, res) => {
      res.type('text');
      Readable.from(['alpha,', 'beta']).pipe(res as unknown as NodeJS.WritableStream);
    }),
    request: { init: { method: 'HEAD' } },
  },
  { name: 'an answer from a timer', handlers: only((_req, res) => void setTimeout(() => res.status(202).json({ late: true }), 20)) },
  { name: 'an answer from a callback', handlers: only((_req, res) => readFile(HELLO, 'utf8', (_error, text) => res.type('txt').send(text.toUpperCase()))) },
  {
    name: 'an async handler',
    handlers: only(async (_req, res) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      res.json({ awaited: true });
    }),
  },
  {
    name: 'a second answer is ignored: the first one stands', status: 201,
    handlers: only((_req, res) => {
      res.status(201).send('first');
      try {
        res.send('second');
      } catch {
        // Express throws here; the bridge ignores (and logs) the second answer.
      }
    }),
  },
  {
    name: 'res.locals is shared by the functions of a route',
    handlers: [
      (_req, res, next) => {
        res.locals.who = 'auth';
        next();
      },
      (_req, res) => res.json({ who: res.locals.who }),
    ],
  },
  {
    name: 'a custom auth that answers stops the chain',
    status: 401,
    handlers: [(_req, res) => res.status(401).json({ error: 'no key' }), (_req, res) => res.json({ reached: true })],
  },
  {
    name: 'what a custom auth sets on req is seen by the handler',
    handlers: [
      (req, res, next) => {
        req.user = { id: 7 };
        res.status(202);
        next();
      },
      (req, res) => res.json({ user: req.user, status: res.statusCode }),
    ],
  },
];

export const REQUEST_CASES: DifferentialCase[] = [
  { name: 'req.query: simple parser', handlers: only((req, res) => res.json(req.query)), request: { path: '?a=1&a=2&b[c]=3&d=&e=%20x&f.g=1' } },
  { name: 'req.params are decoded', path: '/items/:id/:name', handlers: only((req, res) => res.json(req.params)), request: { path: '/items/a%20b/%C3%BC' } },
  {
    name: 'a parameter with a bad escape is 400', status: 400,
    path: '/items/:id',
    handlers: only((req, res) => res.json(req.params)),
    request: { path: '/items/%E0%A4%A' },
    spaceportJson: { error: "Failed to decode param '%E0%A4%A'" },
  },
  {
    name: 'a wildcard parameter is the array of its decoded segments',
    path: '/tree/*rest',
    handlers: only((req, res) => res.json(req.params)),
    request: { path: '/tree/a/b%20c/%2F' },
  },
  { name: 'an absent optional segment is left out of req.params', path: '/optional{/:tail}', handlers: only((req, res) => res.json(req.params)), request: { path: '/optional' } },
  { name: 'a route declared with a trailing slash answers without it', path: '/slashed/', handlers: only((req, res) => res.json({ path: req.path })), request: { path: '/slashed' } },
  {
    name: 'req.path, url, baseUrl, originalUrl under a mixed-case mount',
    mountAs: '/API/Demo',
    path: '/where',
    handlers: only((req, res) => res.json({ path: req.path, url: req.url, baseUrl: req.baseUrl, originalUrl: req.originalUrl })),
    request: { path: '/Where/?x=1&y=2' },
  },
  {
    name: 'req.get and req.header: any case, Referer and Referrer alike',
    handlers: only((req, res) => res.json({ referrer: req.get('Referrer'), type: req.header('content-TYPE') ?? null, missing: req.get('x-missing') ?? null })),
    request: { init: { headers: { referer: 'https://example.com/page' } } },
  },
  {
    name: 'req.method, hostname, protocol, secure, ip, ips, xhr',
    handlers: only((req, res) =>
      res.json({ method: req.method, hostname: req.hostname, protocol: req.protocol, secure: req.secure, ip: req.ip, ips: req.ips, xhr: req.xhr }),
    ),
    request: { init: { headers: { 'x-requested-with': 'XMLHttpRequest', 'x-forwarded-for': '203.0.113.9' } } },
  },
  { name: 'req.is and req.accepts', method: 'post', handlers: only((req, res) => res.json({ is: req.is('json'), accepts: req.accepts(['html', 'json']) })), request: { init: { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}' } } },
  { name: 'req.body from JSON', method: 'post', handlers: only((req, res) => res.json({ body: req.body })), request: { init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,{"b":null}]}' } } },
  { name: 'req.body from JSON after a UTF-8 byte order mark', method: 'post', handlers: only((req, res) => res.json({ body: req.body })), request: { init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '\ufeff{"a":"é"}' } } },
  { name: 'req.body from gzip-compressed JSON', method: 'post', handlers: only((req, res) => res.json({ body: req.body })), request: { init: { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync('{"zipped":[1,2]}') } } },
  { name: 'req.body from a form', method: 'put', handlers: only((req, res) => res.json({ body: req.body })), request: { init: { method: 'PUT', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&a=2&b=x+y&c=%C3%BC' } } },
  { name: 'req.body from text', method: 'post', handlers: only((req, res) => res.json({ body: req.body })), request: { init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'just text' } } },
  { name: 'req.body of an unparsed type stays undefined', method: 'post', handlers: only((req, res) => res.json({ undefined: req.body === undefined })), request: { init: { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'raw' } } },
  { name: 'req.body of a GET without body stays undefined', handlers: only((req, res) => res.json({ undefined: req.body === undefined })) },
  { name: 'req.body from an empty JSON body is {}', method: 'post', handlers: only((req, res) => res.json({ body: req.body })), request: { init: { method: 'POST', headers: { 'content-type': 'application/json' } } } },
  {
    name: 'malformed JSON is 400 before the handler', status: 400,
    method: 'post',
    handlers: only((_req, res) => res.json({ reached: true })),
    request: { init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' } },
    spaceportJson: { error: 'malformed JSON body' },
  },
  {
    name: 'a JSON body that is not an object or array is 400',
    method: 'post',
    handlers: only((_req, res) => res.json({ reached: true })),
    request: { init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '"text"' } },
    spaceportJson: { error: 'JSON body must be an object or an array' },
  },
  {
    name: 'a form keeps bracket and dot keys flat',
    method: 'post',
    handlers: only((req, res) => res.json({ body: req.body })),
    request: { init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a[b]=1&c[]=1&c[]=2&d.e=3&f=' } },
  },
  {
    name: 'a JSON body over the limit is 413', status: 413,
    method: 'post',
    handlers: only((_req, res) => res.json({ reached: true })),
    request: { init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 'x'.repeat(4000) }) } },
    spaceportJson: { error: 'request body too large' },
  },
];

export const ERROR_CASES: DifferentialCase[] = [
  { name: 'next() with nothing after is 404', status: 404, handlers: only((_req, _res, next) => next()), spaceportJson: { error: 'Not Found' } },
  { name: "next('route') with no other route is 404", handlers: only((_req, _res, next) => next('route')), spaceportJson: { error: 'Not Found' } },
  {
    name: "next('route') from a custom auth skips the rest of its route, never reaching the handler",
    handlers: [(_req, _res, next) => next('route'), (_req, res) => res.json({ reached: 'the guarded handler' })],
    nextRoute: (_req, res) => res.json({ reached: 'the next route' }),
  },
  {
    name: "next('route') from a custom auth with no other route is 404",
    status: 404,
    handlers: [(_req, _res, next) => next('route'), (_req, res) => res.json({ reached: 'the guarded handler' })],
    spaceportJson: { error: 'Not Found' },
  },
  {
    name: 'a body read by one route reaches the next route intact',
    method: 'post',
    handlers: only((_req, _res, next) => next()),
    nextRoute: (req, res) => res.json({ body: req.body }),
    request: { init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"order":42}' } },
  },
  {
    name: "a form read before a custom auth declines with next('route') reaches the next route",
    method: 'post',
    handlers: [(_req, _res, next) => next('route'), (_req, res) => res.json({ reached: 'the guarded handler' })],
    nextRoute: (req, res) => res.json({ body: req.body }),
    request: { init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&a=2' } },
  },
  {
    name: "next('router') leaves every route: 404",
    status: 404,
    handlers: [(_req, _res, next) => next('router'), (_req, res) => res.json({ reached: 'the guarded handler' })],
    nextRoute: (_req, res) => res.json({ reached: 'the next route' }),
    spaceportJson: { error: 'Not Found' },
  },
  {
    name: 'res.status then next() is still 404',
    status: 404,
    handlers: only((_req, res, next) => {
      res.status(201);
      next();
    }),
    spaceportJson: { error: 'Not Found' },
  },
  { name: 'next(err) with err.status 403', status: 403, handlers: only((_req, _res, next) => next(Object.assign(new Error('keep out'), { status: 403 }))), spaceportJson: { error: 'keep out' } },
  {
    name: 'next(err) with statusCode and headers', status: 409,
    handlers: only((_req, _res, next) => next(Object.assign(new Error('conflict here'), { statusCode: 409, headers: { 'X-Reason': 'dup' } }))),
    headers: ['x-reason'],
    spaceportJson: { error: 'conflict here' },
  },
  {
    name: 'a thrown error is 500 without its text', status: 500,
    handlers: only(() => {
      throw new Error('secret detail');
    }),
    spaceportJson: INTERNAL_ERROR,
  },
  { name: 'a rejected promise is 500', status: 500, handlers: only(async () => Promise.reject(new Error('async detail'))), spaceportJson: INTERNAL_ERROR },
  {
    name: 'a 4xx set with res.status picks the status of a plain error', status: 418,
    handlers: only((_req, res) => {
      res.status(418);
      throw new Error('short and stout');
    }),
    spaceportJson: { error: 'short and stout' },
  },
  {
    name: 'a 5xx set with res.status picks the status, not the text', status: 503,
    handlers: only((_req, res, next) => {
      res.status(503);
      next(new Error('backend down'));
    }),
    spaceportJson: INTERNAL_ERROR,
  },
  {
    name: 'an error status outside 400-599 is ignored', status: 500,
    handlers: only((_req, _res, next) => next(Object.assign(new Error('odd'), { status: 302 }))),
    spaceportJson: INTERNAL_ERROR,
  },
  {
    name: 'an error after res.type(html) still answers JSON',
    handlers: only((_req, res) => {
      res.type('html');
      throw Object.assign(new Error('bad input'), { status: 400 });
    }),
    spaceportJson: { error: 'bad input' },
  },
  { name: "res.status('200') throws TypeError: 500", handlers: only((_req, res) => res.status('200' as unknown as number).send('never')), spaceportJson: INTERNAL_ERROR },
  { name: 'res.status(1000) throws RangeError: 500', handlers: only((_req, res) => res.status(1000).send('never')), spaceportJson: INTERNAL_ERROR },
  { name: 'a failing timer callback via next(err)', handlers: only((_req, _res, next) => void setTimeout(() => next(Object.assign(new Error('later'), { status: 422 })), 10)), spaceportJson: { error: 'later' } },
];

export const FILE_CASES: DifferentialCase[] = [
  { name: 'res.sendFile(absolute path)', handlers: only((_req, res) => res.sendFile(HELLO)), headers: FILE_HEADERS },
  { name: 'res.sendFile(JSON file) types by extension', handlers: only((_req, res) => res.sendFile(path.join(FIXTURES, 'data.json'))), headers: FILE_HEADERS },
  { name: 'res.sendFile with Range is 206', status: 206, handlers: only((_req, res) => res.sendFile(HELLO)), request: { init: { headers: { range: 'bytes=0-4' } } }, headers: FILE_HEADERS },
  { name: 'res.sendFile with a suffix Range', handlers: only((_req, res) => res.sendFile(HELLO)), request: { init: { headers: { range: 'bytes=-6' } } }, headers: FILE_HEADERS },
  {
    name: 'res.sendFile with an unsatisfiable Range is 416', status: 416,
    handlers: only((_req, res) => res.sendFile(HELLO)),
    request: { init: { headers: { range: 'bytes=900-1000' } } },
    headers: ['content-range'],
    spaceportJson: { error: 'Range Not Satisfiable' },
  },
  { name: 'res.sendFile HEAD', handlers: only((_req, res) => res.sendFile(HELLO)), request: { init: { method: 'HEAD' } }, headers: FILE_HEADERS },
  { name: 'res.sendFile keeps a status set before', handlers: only((_req, res) => res.status(201).sendFile(HELLO)), headers: FILE_HEADERS },
  { name: 'res.sendFile with root and a relative path', handlers: only((_req, res) => res.sendFile('folder/note.txt', { root: FIXTURES })), headers: FILE_HEADERS },
  { name: 'res.sendFile(path, null): no options', handlers: only((_req, res) => res.sendFile(HELLO, null)), headers: FILE_HEADERS },
  { name: 'res.sendFile with headers option', handlers: only((_req, res) => res.sendFile(HELLO, { headers: { 'X-File': 'hello' }, maxAge: 60_000 })), headers: [...FILE_HEADERS, 'x-file'] },
  { name: 'res.sendFile of a dotfile is 404', status: 404, handlers: only((_req, res) => res.sendFile(path.join(FIXTURES, '.secret'))), spaceportJson: { error: 'Not Found' } },
  { name: 'res.sendFile under a dot folder is 404', handlers: only((_req, res) => res.sendFile(path.join(FIXTURES, '.hidden', 'inside.txt'))), spaceportJson: { error: 'Not Found' } },
  { name: 'res.sendFile with a .. segment is 403', status: 403, handlers: only((_req, res) => res.sendFile(`${FIXTURES}/../bridge/hello.txt`)), spaceportJson: { error: 'Forbidden' } },
  { name: 'res.sendFile of a missing file is 404', status: 404, handlers: only((_req, res) => res.sendFile(path.join(FIXTURES, 'missing.txt'))), spaceportJson: { error: 'Not Found' } },
  { name: 'res.sendFile(relative path) throws TypeError: 500', status: 500, handlers: only((_req, res) => res.sendFile('hello.txt')), spaceportJson: INTERNAL_ERROR },
  {
    name: 'res.sendFile callback gets the error and answers', status: 410,
    handlers: only((_req, res) =>
      res.sendFile(path.join(FIXTURES, 'missing.txt'), (error) => {
        res.status(410).json({ status: (error as Error & { status?: number } | undefined)?.status ?? null, sent: res.headersSent });
      }),
    ),
  },
  {
    name: 'res.sendFile callback handing a missing file on to next(err): 404, its status text, never the path',
    status: 404,
    handlers: only((_req, res, next) => res.sendFile(path.join(FIXTURES, 'missing.txt'), (error) => error && next(error))),
    spaceportJson: { error: 'Not Found' },
  },
  {
    name: 'res.download callback handing a missing file on to next(err): 404, its status text, never the path',
    status: 404,
    handlers: only((_req, res, next) => res.download(path.join(FIXTURES, 'missing.txt'), (error) => error && next(error))),
    spaceportJson: { error: 'Not Found' },
  },
  { name: 'res.sendFile callback after success', handlers: only((_req, res) => res.sendFile(HELLO, (error) => void (error && res.status(500).end()))), headers: FILE_HEADERS },
  { name: 'res.sendFile of a directory falls through to 404', status: 404, handlers: only((_req, res) => res.sendFile(path.join(FIXTURES, 'folder'))), spaceportJson: { error: 'Not Found' } },
  { name: 'res.download names the attachment', handlers: only((_req, res) => res.download(HELLO, 'greeting.txt')), headers: [...FILE_HEADERS, 'content-disposition'] },
  {
    name: 'res.download(path, filename, options) keeps the options and its own disposition',
    handlers: only((_req, res) => res.download(HELLO, 'greeting.txt', { headers: { 'X-File': 'yes', 'Content-Disposition': 'inline' }, maxAge: 60_000 })),
    headers: [...FILE_HEADERS, 'content-disposition', 'x-file'],
  },
  {
    name: 'res.download(relative path, options with root)',
    handlers: only((_req, res) => res.download('folder/note.txt', { root: FIXTURES })),
    headers: [...FILE_HEADERS, 'content-disposition'],
  },
  {
    name: 'res.download(path, filename, options, callback) of a missing file', status: 410,
    handlers: only((_req, res) => res.download(path.join(FIXTURES, 'missing.txt'), 'x.txt', {}, (error) => void res.status(410).json({ failed: Boolean(error) }))),
  },
];

/** The conditional-GET case for files needs the file's ETag, which both apps compute alike. */
export const CONDITIONAL_FILE_CASE: DifferentialCase = {
  name: 'res.sendFile with a matching If-None-Match is 304',
  handlers: only((_req, res) => res.sendFile(HELLO)),
  headers: ['etag', 'last-modified'],
};
