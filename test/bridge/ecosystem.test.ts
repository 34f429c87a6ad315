import { writeFileSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import { bothAppsForFile, MOUNT, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { BEARER, ECOSYSTEM_ROUTES, EXPIRED_JWT, MORGAN_LINES, SIGNED_JWT, startUpstream, useUpstream } from '../helpers/ecosystem-routes.ts';
import type { ListeningApp } from '../helpers/koa-app.ts';

/**
 * The Express middleware route authors bring (SPEC §10.7), against real Express 5.3: one route
 * file, each package composed inside the route's function, served by Express and by the bridge
 * as the service runs it; every request goes to both, and the answers must agree on status,
 * type, body and the headers the package is about. Where the service differs by design (it
 * parses bodies before the route, multipart included: SPEC §8.3), the service's documented
 * answer is asserted instead, and the probe says why.
 */
const routes: RouteCase[] = ECOSYSTEM_ROUTES.map((route) => ({ method: route.method, path: route.path, handlers: [route.handler] }));
const apps = bothAppsForFile(routes);

let upstream: ListeningApp | undefined;
test.before(async () => {
  upstream = await startUpstream();
  useUpstream(upstream.url);
});
test.after.always(() => upstream?.close());

interface Seen {
  status: number;
  headers: Headers;
  body: string;
}

async function seen(app: RunningApp, name: 'express' | 'bridge', pathname: string, init: RequestInit = {}): Promise<Seen> {
  const headers = new Headers(init.headers);
  headers.set('x-app', name);
  const response = await fetch(`${app.url}${MOUNT}${pathname}`, { redirect: 'manual', ...init, headers });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** What differs between two answers: status, type, body and the `headers` named, unless the probe says otherwise. */
type Check = (express: Seen, service: Seen) => string[];

interface Probe {
  package: string;
  name: string;
  path: string;
  init?: RequestInit;
  /** Headers that must be equal (Content-Type always is). */
  headers?: readonly string[];
  /** Replaces the comparison of bodies (values that differ by nature: ids, times). */
  body?: (body: string) => unknown;
  /** Replaces the whole comparison: a difference by design, its reason in `byDesign`. */
  check?: Check;
  byDesign?: string;
}

const JSON_POST = (value: unknown, method = 'POST'): RequestInit => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
const withHeaders = (headers: Record<string, string>): RequestInit => ({ headers });
const basic = (user: string, password: string) => withHeaders({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

function compared(probe: Probe): Check {
  return (express, service) => {
    const differences: string[] = [];
    if (express.status !== service.status) differences.push(`status ${service.status}, Express ${express.status}`);
    for (const name of ['content-type', ...(probe.headers ?? [])]) {
      const [want, got] = [express.headers.get(name), service.headers.get(name)];
      if (want !== got) differences.push(`${name}: ${got}, Express ${want}`);
    }
    const shown = probe.body ?? ((body: string) => body);
    if (JSON.stringify(shown(express.body)) !== JSON.stringify(shown(service.body))) differences.push(`body ${service.body.slice(0, 200)}, Express ${express.body.slice(0, 200)}`);
    return differences;
  };
}

const HELMET_HEADERS = [
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
];
const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers', 'vary'];
const STATIC_HEADERS = ['content-length', 'accept-ranges', 'cache-control', 'last-modified', 'etag', 'content-range', 'location'];
const COMPRESSION_HEADERS = ['content-encoding', 'vary', 'content-length'];
const MULTIPART = (): RequestInit => {
  const form = new FormData();
  form.append('note', 'hi');
  form.append('file', new Blob([Buffer.alloc(300, 7)]), 'photo.bin');
  return { method: 'POST', body: form };
};
/** A session cookie: its name and attributes; the id and signature are random. */
const sessionCookie = (seenAnswer: Seen) => seenAnswer.headers.getSetCookie().map((cookie) => cookie.replace(/^sid=[^;]+/, 'sid=<id>'));

const PROBES: Probe[] = [
  { package: 'cors', name: 'cors() answers any origin with *', path: '/cors', init: withHeaders({ origin: 'https://x.example' }), headers: CORS_HEADERS },
  { package: 'cors', name: 'cors() without an Origin', path: '/cors', headers: CORS_HEADERS },
  { package: 'cors', name: 'an allowed origin with credentials and exposed headers', path: '/cors-list', init: withHeaders({ origin: 'https://b.example' }), headers: CORS_HEADERS },
  { package: 'cors', name: 'an origin not in the list gets no CORS headers', path: '/cors-list', init: withHeaders({ origin: 'https://evil.example' }), headers: CORS_HEADERS },
  { package: 'cors', name: 'a POST from the allowed origin', path: '/cors-list', init: { ...JSON_POST({ a: 1 }), headers: { 'content-type': 'application/json', origin: 'https://a.example' } }, headers: CORS_HEADERS },
  { package: 'helmet', name: 'helmet() sets its headers', path: '/helmet', headers: HELMET_HEADERS },
  { package: 'helmet', name: 'helmet() with a custom CSP and frameguard', path: '/helmet-custom', headers: HELMET_HEADERS },
  { package: 'express-validator', name: 'a valid body, normalised', path: '/validate', init: JSON_POST({ email: 'Ada@Example.COM', age: '36' }) },
  { package: 'express-validator', name: 'an invalid body: 422 with the errors', path: '/validate', init: JSON_POST({ email: 'nope', age: 12 }) },
  { package: 'express-validator', name: 'a missing body: 422', path: '/validate', init: { method: 'POST' } },
  { package: 'express-validator', name: 'a query validated and converted', path: '/validate-query?page=3' },
  { package: 'express-validator', name: 'an invalid query: 400', path: '/validate-query?page=zero' },
  { package: 'cookie-parser', name: 'plain and signed cookies read', path: '/cookies', init: withHeaders({ cookie: 'a=1; b=j%3A%7B%22x%22%3A2%7D; s=s%3Aada.signature' }) },
  { package: 'cookie-parser', name: 'no cookies', path: '/cookies' },
  { package: 'cookie-parser', name: 'res.cookie signed with the parser\'s secret', path: '/cookies-set', headers: ['set-cookie'] },
  { package: 'jsonwebtoken', name: 'a valid token verified', path: '/jwt', init: withHeaders({ authorization: `Bearer ${SIGNED_JWT}` }) },
  { package: 'jsonwebtoken', name: 'a bad token is 401', path: '/jwt', init: withHeaders({ authorization: 'Bearer x.y.z' }) },
  { package: 'jsonwebtoken', name: 'an expired token is 401', path: '/jwt', init: withHeaders({ authorization: `Bearer ${EXPIRED_JWT}` }) },
  { package: 'jsonwebtoken', name: 'a token signed from the body', path: '/jwt-sign', init: JSON_POST({ user: 'grace' }) },
  { package: 'zod', name: 'a valid body parsed', path: '/zod', init: JSON_POST({ name: 'ada', tags: ['a'] }) },
  { package: 'zod', name: 'an invalid body: 400 with the issues', path: '/zod', init: JSON_POST({ name: 'a', tags: [1, 2, 3, 4] }) },
  { package: 'passport (local)', name: 'the right password', path: '/passport-local', init: JSON_POST({ username: 'ada', password: 'lovelace' }) },
  { package: 'passport (local)', name: 'a wrong password is 401', path: '/passport-local', init: JSON_POST({ username: 'ada', password: 'nope' }) },
  { package: 'passport (local)', name: 'no credentials is 400', path: '/passport-local', init: JSON_POST({}) },
  { package: 'passport (bearer)', name: 'the right token', path: '/passport-bearer', init: withHeaders({ authorization: `Bearer ${BEARER}` }), headers: ['www-authenticate'] },
  { package: 'passport (bearer)', name: 'a wrong token is 401 with a challenge', path: '/passport-bearer', init: withHeaders({ authorization: 'Bearer nope' }), headers: ['www-authenticate'] },
  { package: 'passport (jwt)', name: 'a valid JWT', path: '/passport-jwt', init: withHeaders({ authorization: `Bearer ${SIGNED_JWT}` }) },
  { package: 'passport (jwt)', name: 'no JWT is 401', path: '/passport-jwt' },
  { package: 'express-basic-auth', name: 'the right user', path: '/basic', init: basic('grace', 'hopper'), headers: ['www-authenticate'] },
  { package: 'express-basic-auth', name: 'a wrong password is 401 with the challenge', path: '/basic', init: basic('grace', 'x'), headers: ['www-authenticate'] },
  { package: 'express-basic-auth', name: 'no credentials is 401', path: '/basic', headers: ['www-authenticate'] },
  { package: 'http-errors', name: 'a thrown 404 reaches the error middleware', path: '/errors/404' },
  { package: 'http-errors', name: 'a thrown 503 reaches the error middleware', path: '/errors/503' },
  { package: 'http-errors', name: 'next(createError(409, {headers})) reaches the error middleware', path: '/errors-next' },
  {
    package: 'http-errors',
    name: 'a thrown 422 with no error middleware',
    path: '/errors-unhandled/422',
    byDesign: 'the service answers the JSON error of SPEC §7 (the message of a 4xx) where Express renders HTML, at the same status',
    check: (express, service) => notFoundAsJson(express, service, 422, { error: 'no error middleware for this one' }),
  },
  { package: 'serve-static', name: 'a file', path: '/static/hello.txt', headers: STATIC_HEADERS },
  { package: 'serve-static', name: 'a HEAD of a file keeps its length', path: '/static/hello.txt', init: { method: 'HEAD' }, headers: STATIC_HEADERS },
  { package: 'serve-static', name: 'a byte range is 206', path: '/static/big.txt', init: withHeaders({ range: 'bytes=0-9' }), headers: STATIC_HEADERS },
  {
    package: 'serve-static',
    name: 'an unsatisfiable range is 416 through next(err)',
    path: '/static/hello.txt',
    init: withHeaders({ range: 'bytes=5000-6000' }),
    byDesign: 'send fails with next(err): Express renders its HTML error page, the service the JSON error of SPEC §7, at the same status',
    check: (express, service) => notFoundAsJson(express, service, 416, { error: 'Range Not Satisfiable' }),
  },
  { package: 'serve-static', name: 'a folder with an index', path: '/static/folder/', headers: STATIC_HEADERS },
  { package: 'serve-static', name: 'a folder without its slash redirects', path: '/static/folder', headers: ['location', 'content-length'] },
  {
    package: 'serve-static',
    name: 'a dotfile falls through to the next handler: none, so 404',
    path: '/static/.secret',
    byDesign: 'nothing after the route: Express renders its "Cannot GET" HTML page, the service its JSON 404 (SPEC §7)',
    check: notFoundAsJson,
  },
  { package: 'serve-static', name: 'a missing file falls through: 404', path: '/static/missing.txt', byDesign: 'as above: a JSON 404 where Express renders HTML', check: notFoundAsJson },
  { package: 'morgan', name: 'the answer is logged once it ends', path: '/morgan', check: morganLines('/morgan') },
  { package: 'morgan', name: 'a sendFile answer is logged with its length', path: '/morgan-file', check: morganLines('/morgan-file') },
  { package: 'morgan', name: 'a HEAD is logged', path: '/morgan', init: { method: 'HEAD' }, check: morganLines('/morgan', 'HEAD') },
  { package: 'on-finished', name: 'on-finished waits for the answer', path: '/on-finished' },
  { package: 'on-finished', name: 'headersSent and writableEnded tell the truth while streaming', path: '/on-finished-stream' },
  { package: 'response-time', name: 'X-Response-Time is set', path: '/response-time', check: responseTimeSet(/^\d+\.\d{3}ms$/) },
  { package: 'response-time', name: 'on a sendFile answer too', path: '/response-time-file', check: responseTimeSet(/^\d+\.\d{3}$/) },
  { package: 'compression', name: 'a large JSON answer is gzipped', path: '/compressed-json', init: withHeaders({ 'accept-encoding': 'gzip' }), headers: COMPRESSION_HEADERS },
  { package: 'compression', name: 'a small one is not', path: '/compressed-small', init: withHeaders({ 'accept-encoding': 'gzip' }), headers: COMPRESSION_HEADERS },
  { package: 'compression', name: 'res.send of a large text, deflated', path: '/compressed-text', init: withHeaders({ 'accept-encoding': 'deflate' }), headers: COMPRESSION_HEADERS },
  { package: 'compression', name: 'a streamed answer, gzipped', path: '/compressed-stream', init: withHeaders({ 'accept-encoding': 'gzip' }), headers: COMPRESSION_HEADERS },
  { package: 'compression', name: 'a sendFile answer, gzipped', path: '/compressed-file', init: withHeaders({ 'accept-encoding': 'gzip' }), headers: ['content-encoding', 'vary', 'content-length', 'etag', 'last-modified'] },
  { package: 'compression', name: 'a redirect, too small to compress', path: '/compressed-redirect', init: withHeaders({ 'accept-encoding': 'gzip' }), headers: [...COMPRESSION_HEADERS, 'location'] },
  { package: 'compression', name: 'no Accept-Encoding: as it is', path: '/compressed-json', headers: COMPRESSION_HEADERS },
  {
    package: 'compression',
    name: 'an error answer goes through it too',
    path: '/compressed-error',
    init: withHeaders({ 'accept-encoding': 'gzip' }),
    byDesign: 'the error body is the JSON of SPEC §7 where Express renders HTML; both go through compression (Vary: Accept-Encoding)',
    check: (express, service) => [
      ...notFoundAsJson(express, service, 418, { error: 'short and stout' }),
      ...(service.headers.get('vary') === express.headers.get('vary') ? [] : [`vary: ${service.headers.get('vary')}, Express ${express.headers.get('vary')}`]),
    ],
  },
  { package: 'express-session', name: 'a new session sets its cookie', path: '/session', check: (express, service) => sessionDifferences(express, service) },
  { package: 'express-session', name: 'a session saved before a redirect', path: '/session-redirect', headers: ['location'], check: (express, service) => sessionDifferences(express, service) },
  { package: 'http-proxy-middleware', name: 'a GET is forwarded', path: '/proxy/thing?x=1' },
  { package: 'http-proxy-middleware', name: 'a POST body is forwarded', path: '/proxy/thing', init: JSON_POST({ a: 1, b: [2] }) },
  { package: 'http-proxy-middleware', name: 'a PUT body is forwarded', path: '/proxy/thing', init: JSON_POST({ put: true }, 'PUT') },
  { package: 'http-proxy-middleware', name: 'a urlencoded POST body is forwarded', path: '/proxy/form', init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=two' } },
  { package: 'body-parser', name: 'express.json() in the route skips a parsed body', path: '/json-in-route', init: JSON_POST({ a: 1 }) },
  { package: 'body-parser', name: 'bodyParser.json() and urlencoded() in the route skip a parsed body', path: '/body-parser-json', init: JSON_POST({ nested: { a: [1] } }) },
  { package: 'body-parser', name: 'express.json() in the route leaves a text body alone', path: '/json-in-route', init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'just text' } },
  { package: 'body-parser', name: 'express.urlencoded() in the route skips a parsed body', path: '/urlencoded-in-route', init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2' } },
  { package: 'body-parser', name: 'express.raw() in the route skips a parsed body', path: '/raw-in-route', init: JSON_POST({ raw: false }) },
  { package: 'body-parser', name: 'express.json() in the route: malformed JSON is 400 in both', path: '/json-in-route', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' }, check: (express, service) => (express.status === 400 && service.status === 400 ? [] : [`status ${service.status}, Express ${express.status}`]) },
  {
    package: 'cors',
    name: 'a preflight OPTIONS',
    path: '/cors',
    init: { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'PUT' } },
    byDesign: "Express's router answers OPTIONS itself (200, Allow); the service answers a preflight only with `cors` configured, else 405 with Allow (SPEC §8.2, §8.11)",
    check: (express, service) => (express.status === 200 && service.status === 405 && service.headers.get('allow') !== null ? [] : [`Express ${express.status}, service ${service.status}`]),
  },
  { package: 'multer', name: 'a JSON body: multer skips it', path: '/multer-json', init: JSON_POST({ a: 1 }) },
  {
    package: 'multer',
    name: 'a multipart body',
    path: '/multer',
    init: MULTIPART(),
    byDesign: 'the service parses multipart before the route (files as req.files, after authentication); multer then finds the body read and fails (500, logged)',
    check: (express, service) => {
      const differences: string[] = [];
      if (express.status !== 200 || !express.body.includes('"photo.bin"')) differences.push(`Express did not read the file: ${express.status} ${express.body}`);
      if (service.status !== 500) differences.push(`service status ${service.status}`);
      return differences;
    },
  },
];

for (const kind of ['json', 'send', 'redirect', 'sendStatus', 'end', 'file']) {
  PROBES.push({ package: 'node:http', name: `res.${kind === 'file' ? 'sendFile' : kind} goes through the instance's writeHead and end`, path: `/wrapped/${kind}`, headers: ['x-write-head', 'x-end-saw', 'location'] });
}
PROBES.push({
  package: 'node:http',
  name: "an error answer goes through the instance's writeHead and end",
  path: '/wrapped/error',
  byDesign: 'the JSON error of SPEC §7 where Express renders HTML; both through the wrapped writeHead and end',
  check: (express, service) => [
    ...notFoundAsJson(express, service, 400, { error: 'refused' }),
    ...['x-write-head', 'x-end-saw'].filter((name) => express.headers.get(name) !== service.headers.get(name) || service.headers.get(name) === null).map((name) => `${name}: ${service.headers.get(name)}, Express ${express.headers.get(name)}`),
  ],
});
PROBES.push({ package: 'node:http', name: 'headersSent, writableEnded, finished, socket and the HTTP version tell the truth', path: '/states' });

/** The HEAD of `res.setHeader('Content-Length', n); res.end()` keeps n. */
PROBES.push({ package: 'node:http', name: 'a HEAD after setHeader(Content-Length, 42) and end() keeps 42', path: '/declared-length', init: { method: 'HEAD' }, headers: ['content-length'] });

function notFoundAsJson(express: Seen, service: Seen, status = 404, json: unknown = { error: 'Not Found' }): string[] {
  const differences: string[] = [];
  if (express.status !== status || !express.headers.get('content-type')?.startsWith('text/html')) differences.push(`Express ${express.status} ${express.headers.get('content-type')}`);
  if (service.status !== status) differences.push(`service status ${service.status}`);
  if (service.headers.get('content-type') !== 'application/json; charset=utf-8') differences.push(`service type ${service.headers.get('content-type')}`);
  if (JSON.stringify(JSON.parse(service.body || 'null')) !== JSON.stringify(json)) differences.push(`service body ${service.body}`);
  return differences;
}

function responseTimeSet(pattern: RegExp): Check {
  return (express, service) => {
    const differences = compared({ package: '', name: '', path: '' })(express, service);
    for (const [name, each] of [['Express', express], ['service', service]] as const) {
      if (!pattern.test(each.headers.get('x-response-time') ?? '')) differences.push(`${name} X-Response-Time ${each.headers.get('x-response-time')}`);
    }
    return differences;
  };
}

function sessionDifferences(express: Seen, service: Seen): string[] {
  const differences = compared({ package: '', name: '', path: '', headers: ['location', 'content-length'] })(express, service);
  const [want, got] = [sessionCookie(express), sessionCookie(service)];
  if (JSON.stringify(want) !== JSON.stringify(got)) differences.push(`set-cookie ${got}, Express ${want}`);
  return differences;
}

/** morgan's line for `pathname`, its response time aside, and that time a number. */
function morganLines(pathname: string, method = 'GET'): Check {
  return (express, service) => {
    const differences = compared({ package: '', name: '', path: '' })(express, service);
    const lineOf = (lines: string[]) => lines.find((line) => line.startsWith(`${method} ${MOUNT}${pathname} `)) ?? '';
    const [want, got] = [lineOf(MORGAN_LINES.express), lineOf(MORGAN_LINES.bridge)];
    const time = / \d+\.\d{3}$/;
    if (!time.test(got)) differences.push(`no response time in "${got}"`);
    if (want.replace(time, '') !== got.replace(time, '')) differences.push(`morgan: ${got}, Express ${want}`);
    return differences;
  };
}

/** Per package: probes answered as under Express (or as the service documents), and what differs. */
const TALLY = new Map<string, { same: number; cases: number; differs: string[] }>();

function record(probe: Probe, differences: string[]): void {
  const entry = TALLY.get(probe.package) ?? { same: 0, cases: 0, differs: [] };
  entry.cases += 1;
  if (differences.length === 0) entry.same += 1;
  if (probe.byDesign) entry.differs.push(`by design: ${probe.byDesign}`);
  TALLY.set(probe.package, entry);
}

async function compare(t: ExecutionContext, probe: Probe): Promise<void> {
  const express = await seen(apps.express(), 'express', probe.path, probe.init);
  const service = await seen(apps.bridge(), 'bridge', probe.path, probe.init);
  // morgan writes its line once the answer is finished, just after the client has it.
  if (probe.package === 'morgan') await new Promise((resolve) => setTimeout(resolve, 50));
  const differences = (probe.check ?? compared(probe))(express, service);
  record(probe, differences);
  t.deepEqual(differences, [], probe.byDesign ? `by design: ${probe.byDesign}` : 'as under Express 5');
}

test('the probes cover every package with about 80 requests', (t) => {
  const packages = new Set(PROBES.map((probe) => probe.package));
  t.true(packages.size >= 19, `${packages.size} packages`);
  t.true(PROBES.length >= 60, `${PROBES.length} probes`);
});

for (const probe of PROBES) {
  test(`${probe.package}: ${probe.name}`, (t) => compare(t, probe));
}

/** Stateful packages: their requests in order, each app keeping its own state. */
test('express-rate-limit: the budget counts down, then 429 with Retry-After, headers as under Express', async (t) => {
  const errors: unknown[] = [];
  const original = console.error;
  // Other tests of the file run meanwhile (http-proxy prints a deprecation): the limiter's own errors only.
  console.error = (...values: unknown[]) => {
    if (values.some((value) => /ERR_ERL|ValidationError|express-rate-limit/.test(String((value as Error)?.stack ?? value)))) errors.push(values);
  };
  try {
    for (const [pathname, count] of [['/limited', 3], ['/limited-6', 2]] as const) {
      for (let index = 0; index < count; index++) {
        const express = await seen(apps.express(), 'express', pathname);
        const service = await seen(apps.bridge(), 'bridge', pathname);
        const probe: Probe = { package: 'express-rate-limit', name: `${pathname} #${index}`, path: pathname, headers: ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'x-ratelimit-limit', 'x-ratelimit-remaining'] };
        const differences = compared(probe)(express, service);
        if ((express.headers.get('retry-after') === null) !== (service.headers.get('retry-after') === null)) differences.push('retry-after');
        const reset = (each: Seen) => each.headers.get('ratelimit')?.replace(/reset=\d+/, 'reset=<s>') ?? each.headers.get('ratelimit-reset') !== null;
        if (reset(express) !== reset(service)) differences.push(`ratelimit: ${service.headers.get('ratelimit')}, Express ${express.headers.get('ratelimit')}`);
        record(probe, differences);
        t.deepEqual(differences, [], `${pathname} request ${index + 1}`);
      }
    }
  } finally {
    console.error = original;
  }
  t.deepEqual(errors, [], 'express-rate-limit logged no validation error (req.app, req.ip)');
});

test('express-session: the cookie brings the session back', async (t) => {
  const views: number[][] = [];
  for (const [app, name] of [[apps.express(), 'express'], [apps.bridge(), 'bridge']] as const) {
    const first = await seen(app, name, '/session');
    const cookie = first.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const second = await seen(app, name, '/session', withHeaders({ cookie }));
    views.push([JSON.parse(first.body).views, JSON.parse(second.body).views]);
  }
  const differences = JSON.stringify(views[0]) === JSON.stringify(views[1]) ? [] : [`views ${views[1]}, Express ${views[0]}`];
  record({ package: 'express-session', name: 'the cookie brings the session back', path: '/session' }, differences);
  t.deepEqual(views, [[1, 2], [1, 2]]);
});

test.after.always('the table: package | same / cases | what differs', (t) => {
  const rows = [...TALLY].map(([name, { same, cases, differs }]) => `| ${name} | ${same} / ${cases} | ${[...new Set(differs)].join('; ') || '—'} |`);
  const table = ['| package | same / cases | what differs |', '|---|---|---|', ...rows].join('\n');
  t.log(table);
  if (process.env.ECOSYSTEM_TABLE) writeFileSync(process.env.ECOSYSTEM_TABLE, `${table}\n`);
});
