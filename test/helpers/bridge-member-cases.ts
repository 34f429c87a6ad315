import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import cookieParser from 'cookie-parser';
import { sign } from 'cookie-signature';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import { FIXTURES, INTERNAL_ERROR, type DifferentialCase } from './bridge-cases.ts';

/**
 * Cases for the members issue 14 adds or corrects, each written from what Express 5's own tests
 * (`test/req.*.js`, `test/res.*.js`) say the member does: `res.format`, `res.jsonp`,
 * `res.links`, `req.route`, signed cookies, `maxAge`, the async context carried by `next`,
 * header changes once the body has started, null-prototype `res.locals` and `req.params`.
 */
const only = (handler: RouteHandler): RouteHandler[] => [handler];
const accept = (value: string) => ({ init: { headers: { accept: value } } });

export const COOKIE_SECRET = 'a cookie secret';
/** cookie-parser, the middleware Express apps use, run as a bridged function like any other. */
export const parseCookies = cookieParser(COOKIE_SECRET) as unknown as RouteHandler;

/** The three formats Express's tests offer, by full type. */
export const threeFormats: RouteHandler = (_req, res) =>
  res.format({
    'text/plain': () => res.send('hey'),
    'text/html': () => res.send('<p>hey</p>'),
    'application/json': () => res.send({ message: 'hey' }),
  });

export const FORMAT_CASES: DifferentialCase[] = [
  { name: 'res.format: q-values decide', handlers: only(threeFormats), request: accept('text/html; q=.5, application/json, */*; q=.1'), headers: ['vary'] },
  { name: 'res.format: a wildcard subtype matches', handlers: only(threeFormats), request: accept('text/html; q=.5, application/*, */*; q=.1') },
  { name: 'res.format: the chosen type gets a charset', handlers: only(threeFormats), request: accept('text/html; q=.5, text/plain'), headers: ['vary'] },
  { name: 'res.format: without Accept, the first format answers', handlers: only(threeFormats), headers: ['vary'] },
  {
    name: 'res.format: nothing acceptable is 406',
    status: 406,
    handlers: only(threeFormats),
    request: accept('foo/bar'),
    spaceportJson: { error: 'Not Acceptable' },
  },
  {
    name: 'res.format: extension names as keys',
    handlers: only((_req, res) => res.format({ text: () => res.send('hey'), html: () => res.send('<p>hey</p>'), json: () => res.send({ message: 'hey' }) })),
    request: accept('text/html'),
  },
  {
    name: 'res.format: keys with parameters answer with the bare type',
    handlers: only((_req, res) =>
      res.format({
        'text/plain; charset=utf-8': () => res.send('hey'),
        'text/html; foo=bar; bar=baz': () => res.send('<p>hey</p>'),
        'application/json; q=0.5': () => res.send({ message: 'hey' }),
      }),
    ),
    request: accept('application/json'),
  },
  {
    name: 'res.format: each format gets req, res and a next',
    handlers: only((req, res) => res.format({ json: (a, b, c) => res.json({ req: a === req, res: b === res, next: typeof c }) })),
  },
  {
    name: 'res.format: default answers when nothing else is acceptable',
    handlers: only((_req, res) => res.format({ text: () => res.send('hey'), default: () => res.send('default') })),
    request: accept('text/html'),
  },
  {
    name: 'res.format: a default alone answers any Accept',
    handlers: only((_req, res) => res.format({ default: () => res.send('only default') })),
    request: accept('*/*'),
    headers: ['vary'],
  },
  {
    name: 'res.format: default may call another format through this',
    handlers: only((_req, res) =>
      res.format({
        json: () => res.send('json'),
        default(this: { json: () => void }) {
          res.header('x-default', '1');
          this.json();
        },
      }),
    ),
    request: accept('text/plain'),
    headers: ['x-default'],
  },
];

const jsonp = (value: unknown): RouteHandler[] => only((_req, res) => res.jsonp(value));
const JSONP_HEADERS = ['x-content-type-options', 'content-length', 'etag'];

export const JSONP_CASES: DifferentialCase[] = [
  { name: 'res.jsonp with ?callback', handlers: jsonp({ count: 1 }), request: { path: '?callback=something' }, headers: JSONP_HEADERS },
  { name: 'res.jsonp takes the first of several callbacks', handlers: jsonp({ count: 1 }), request: { path: '?callback=something&callback=other' } },
  { name: 'res.jsonp ignores callback[a] and answers JSON', handlers: jsonp({ count: 1 }), request: { path: '?callback[a]=something' }, headers: JSONP_HEADERS },
  { name: 'res.jsonp allows [] in the callback', handlers: jsonp({ count: 1 }), request: { path: '?callback=callbacks[123]' } },
  { name: 'res.jsonp strips what is not a name', handlers: jsonp({}), request: { path: '?callback=foo;bar()' } },
  { name: 'res.jsonp escapes U+2028 and U+2029', handlers: jsonp({ text: '\u2028 \u2029 woot' }), request: { path: '?callback=foo' } },
  { name: 'res.jsonp without callback keeps U+2028 and U+2029', handlers: jsonp({ text: '\u2028 \u2029 woot' }), headers: JSONP_HEADERS },
  { name: 'res.jsonp with an empty callback is JSON', handlers: jsonp([1, 2]), request: { path: '?callback=' } },
  {
    name: 'res.jsonp without callback keeps a type set before',
    handlers: only((_req, res) => res.type('application/vnd.example+json').jsonp({ hello: 'world' })),
    headers: JSONP_HEADERS,
  },
  {
    name: 'res.jsonp with callback replaces a type set before',
    handlers: only((_req, res) => res.type('application/vnd.example+json').jsonp({ hello: 'world' })),
    request: { path: '?callback=cb' },
    headers: JSONP_HEADERS,
  },
  { name: 'res.jsonp(undefined) calls back with no argument', handlers: jsonp(undefined), request: { path: '?callback=cb' } },
  { name: 'res.jsonp(null)', handlers: jsonp(null), request: { path: '?callback=cb' } },
  { name: 'res.jsonp(string)', handlers: jsonp('tobi'), request: { path: '?callback=cb' } },
  { name: 'res.jsonp(number)', handlers: jsonp(42), request: { path: '?callback=cb' } },
  { name: 'res.jsonp(array)', handlers: jsonp(['foo', 'bar']), request: { path: '?callback=cb' } },
  { name: 'res.jsonp(undefined) without callback', handlers: jsonp(undefined), headers: JSONP_HEADERS },
];

export const LINK_CASES: DifferentialCase[] = [
  {
    name: 'res.links sets Link',
    handlers: only((_req, res) => res.links({ next: 'http://api.example.com/users?page=2', last: 'http://api.example.com/users?page=5' }).end()),
    headers: ['link'],
  },
  {
    name: 'res.links appends on each call',
    handlers: only((_req, res) => {
      res.links({ next: 'http://api.example.com/users?page=2' });
      res.links({ prev: 'http://api.example.com/users?page=1' });
      res.end();
    }),
    headers: ['link'],
  },
  {
    name: 'res.links takes several links for one rel',
    handlers: only((_req, res) => res.links({ last: ['http://api.example.com/users?page=5', 'http://api.example.com/users?page=1'] }).end()),
    headers: ['link'],
  },
];

const describeRoute: RouteHandler = (req, res) => res.json({ path: req.route?.path, methods: req.route?.methods });

export const ROUTE_CASES: DifferentialCase[] = [
  { name: 'req.route is the declared route', path: '/user/:id{/:op}', handlers: only(describeRoute), request: { path: '/user/12/edit' } },
  { name: 'req.route keeps a declared trailing slash', path: '/slashed/', handlers: only(describeRoute), request: { path: '/slashed' } },
  { name: 'req.route of a POST route', method: 'post', handlers: only(describeRoute), request: { init: { method: 'POST' } } },
  {
    name: 'req.route is the route now running, after next()',
    handlers: only((req, res, next) => {
      res.set('x-first', String(req.route?.path));
      next();
    }),
    nextRoute: describeRoute,
    headers: ['x-first'],
  },
];

/** A cookie as `res.cookie(name, value, { signed: true })` writes it; `tampered` spoils the signature. */
const signedCookie = (name: string, value: string, tampered = '') => `${name}=${encodeURIComponent(`s:${sign(value, COOKIE_SECRET)}${tampered}`)}`;

export const COOKIE_CASES: DifferentialCase[] = [
  {
    name: 'res.cookie signed: true signs with cookie-parser\'s req.secret',
    handlers: [
      parseCookies,
      (_req, res) => {
        res.cookie('name', 'tobi', { signed: true }).cookie('obj', { foo: 'bar' }, { signed: true, maxAge: 60_000 });
        res.end();
      },
    ],
    headers: ['set-cookie'],
  },
  {
    name: 'req.signedCookies reads what res.cookie signed',
    handlers: [parseCookies, (req, res) => res.json({ signed: req.signedCookies, plain: req.cookies })],
    request: { init: { headers: { cookie: `${signedCookie('obj', 'j:{"foo":"bar"}')}; ${signedCookie('forged', 'x', 'x')}; plain=1` } } },
  },
  {
    name: 'res.cookie signed without a secret throws: 500',
    handlers: only((_req, res) => res.cookie('name', 'tobi', { signed: true }).end()),
    spaceportJson: INTERNAL_ERROR,
  },
  { name: 'res.cookie with a maxAge that is not a number throws: 500', handlers: only((_req, res) => res.cookie('name', 'tobi', { maxAge: 'foobar' as unknown as number }).end()), spaceportJson: INTERNAL_ERROR },
  { name: 'res.cookie with an infinite maxAge throws: 500', handlers: only((_req, res) => res.cookie('name', 'tobi', { maxAge: Number.POSITIVE_INFINITY }).end()), spaceportJson: INTERNAL_ERROR },
  { name: 'res.cookie with a numeric string maxAge', handlers: only((_req, res) => res.cookie('name', 'tobi', { maxAge: '90000' as unknown as number }).end()), headers: ['set-cookie'] },
  { name: 'res.cookie with a name Express refuses throws: 500', handlers: only((_req, res) => res.cookie('a(b)', 'tobi').end()), spaceportJson: INTERNAL_ERROR },
];

/** The store a function enters around `next()` with `als.run(store, next)`. */
const context = new AsyncLocalStorage<{ who: string }>();
const enterStore: RouteHandler = (_req, _res, next) => context.run({ who: 'auth' }, next);
const MISSING = path.join(FIXTURES, 'missing.txt');

export const ASYNC_CONTEXT_CASES: DifferentialCase[] = [
  { name: 'a store entered around next() is seen by the next function', handlers: [enterStore, (_req, res) => res.json({ store: context.getStore() ?? null })] },
  {
    name: 'a store entered around next() after an await is seen by the next function',
    handlers: [
      async (_req, _res, next) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        context.run({ who: 'late auth' }, next);
      },
      async (_req, res) => {
        await Promise.resolve();
        res.json({ store: context.getStore() ?? null });
      },
    ],
  },
  {
    name: 'the sendFile callback sees the store',
    handlers: [enterStore, (_req, res) => res.sendFile(MISSING, (error) => res.json({ store: context.getStore() ?? null, status: (error as { status?: number } | undefined)?.status }))],
  },
  {
    name: 'the download callback sees the store',
    handlers: [enterStore, (_req, res) => res.download(MISSING, (error) => res.json({ store: context.getStore() ?? null, failed: Boolean(error) }))],
  },
];

/** Tries `change` once the body has started and ends the body with what happened. */
const afterBodyStarted = (change: (res: Parameters<RouteHandler>[1]) => void): RouteHandler[] =>
  only((_req, res) => {
    res.write('started;');
    try {
      change(res);
      res.end('changed');
    } catch (error) {
      res.end(String((error as { code?: unknown }).code));
    }
  });

export const PROTOTYPE_AND_HEADER_CASES: DifferentialCase[] = [
  { name: 'res.locals has a null prototype and starts empty', handlers: only((_req, res) => res.json({ nullPrototype: Object.getPrototypeOf(res.locals) === null, locals: res.locals })) },
  {
    name: 'req.params has a null prototype',
    path: '/items/:id',
    handlers: only((req, res) => res.json({ nullPrototype: Object.getPrototypeOf(req.params) === null, params: req.params })),
    request: { path: '/items/7' },
  },
  { name: 'res.set once the body has started throws ERR_HTTP_HEADERS_SENT', handlers: afterBodyStarted((res) => res.set('X-Late', 'yes')) },
  { name: 'res.setHeader once the body has started throws ERR_HTTP_HEADERS_SENT', handlers: afterBodyStarted((res) => res.setHeader('X-Late', 'yes')) },
  { name: 'res.cookie once the body has started throws ERR_HTTP_HEADERS_SENT', handlers: afterBodyStarted((res) => res.cookie('late', 'yes')) },
  { name: 'res.removeHeader once the body has started throws ERR_HTTP_HEADERS_SENT', handlers: afterBodyStarted((res) => res.removeHeader('X-Any')) },
];

export const MEMBER_CASES: DifferentialCase[] = [
  ...FORMAT_CASES,
  ...JSONP_CASES,
  ...LINK_CASES,
  ...ROUTE_CASES,
  ...COOKIE_CASES,
  ...ASYNC_CONTEXT_CASES,
  ...PROTOTYPE_AND_HEADER_CASES,
];
