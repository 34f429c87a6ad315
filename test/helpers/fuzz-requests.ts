import fc from 'fast-check';
import { anyText, fuzzBody, type BodyShape, type FuzzBody } from './fuzz-bodies.ts';
import { SSO_TOKENS } from '../../projects/sample/test/sso-stand-in.ts';
import { TENANT_NAME } from '../../lib/values/tenant-name.ts';

/** One request as bytes will carry it: any method, target, header line and body. */
export interface FuzzRequest {
  /** The route it was aimed at, e.g. `POST /auth/login`. */
  readonly aim: string;
  readonly method: string;
  /** The request target as a binary string (one character a byte). */
  readonly target: string;
  readonly version: string;
  readonly headers: ReadonlyArray<readonly [name: string, value: string]>;
  /** Header lines that are not `name: value`. */
  readonly rawLines: readonly string[];
  readonly body: FuzzBody;
  readonly framing: Framing;
}

type Framing = 'length' | 'chunked' | 'length and chunked' | 'two lengths';

/** What the fuzzer needs to know about the service it aims at. */
export interface FuzzTargets {
  /** Bearer tokens by kind: `valid`, `valid in acme`, and every forged kind. */
  readonly tokens: Readonly<Record<string, string>>;
  /** The password of the account `alice`. */
  readonly password: string;
  /** The sample's `x-api-key`. */
  readonly apiKey: string;
}

interface Route {
  readonly method: string;
  readonly path: string;
  readonly body: BodyShape;
  readonly query?: fc.Arbitrary<string>;
}

/** UTF-8 bytes of `text` as a binary string, as they go on the wire. */
export function utf8Bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** Every UTF-8 byte of `text` but letters and digits percent-encoded (a lone surrogate as U+FFFD). */
function percentEncoded(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0')}`)).join('');
}

const ssoQuery = fc.oneof(
  fc.constantFrom(`${SSO_TOKENS.employeePrefix}alice`, `${SSO_TOKENS.employeePrefix}nobody`, SSO_TOKENS.refused, SSO_TOKENS.garbage, SSO_TOKENS.noEmployeeId, SSO_TOKENS.silent, SSO_TOKENS.stalledBody),
  anyText,
).map((token) => `?usertoken=${percentEncoded(token)}`);

const spaceName = fc.oneof(fc.constant('Payroll'), fc.constantFrom('..', '%2e%2e', '%2F', 'a%00b', '%ff', 'x'.repeat(100)), anyText.map((text) => percentEncoded(text)));

function sampleRoutes(prefix: string): Route[] {
  return [
    { method: 'POST', path: `${prefix}/getOneAccount`, body: 'account' },
    { method: 'GET', path: `${prefix}/home`, body: 'none', query: ssoQuery },
    { method: 'GET', path: `${prefix}/heartbeat`, body: 'none' },
    { method: 'POST', path: `${prefix}/upload`, body: 'upload' },
    { method: 'GET', path: `${prefix}/partner/status`, body: 'none' },
  ];
}

/** Every system endpoint (SPEC §12), the sample's routes at both mounts (§11), and unknown paths. */
const route: fc.Arbitrary<Route> = fc.oneof(
  fc.constantFrom<Route>(
    { method: 'GET', path: '/healthz', body: 'none' },
    { method: 'GET', path: '/openapi.json', body: 'none' },
    { method: 'GET', path: '/docs', body: 'none' },
    { method: 'POST', path: '/auth/login', body: 'login' },
    { method: 'GET', path: '/spaces', body: 'none' },
    { method: 'POST', path: '/spaces', body: 'space' },
    { method: 'GET', path: '/', body: 'none' },
    { method: 'GET', path: '/nowhere', body: 'none' },
    { method: 'POST', path: '/api/unknown-project/x', body: 'account' },
    { method: 'GET', path: '/API/SAMPLE/HEARTBEAT/', body: 'none' },
  ),
  fc.constantFrom(...sampleRoutes('/api/sample'), ...sampleRoutes('/api/project')),
  fc.tuple(fc.constantFrom('GET', 'PUT', 'DELETE'), spaceName).map(([method, name]): Route => ({ method, path: `/spaces/${name}`, body: method === 'PUT' ? 'space' : 'none' })),
  spaceName.map((name): Route => ({ method: 'GET', path: `/spaces/${name}/history`, body: 'none' })),
);

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'SEARCH', 'QUERY', 'get', 'Post', 'FOO', 'M-SEARCH', 'PRI', 'G E T', ''];

const PATH_SUFFIXES = ['/..', '/../..', '/../../etc/passwd', '/%2e%2e', '/%2e%2e/%2e%2e/etc/passwd', '/%2E%2E%2F', '/%00', '%00', '/%c0%ae%c0%ae/', '/%252e%252e/', '/..%2f..%2f', '/.%2e/', '\\..\\', '//', '/%', '/%zz', '/%ff', '/%e2%82%ac', ';x=1', '/.', '/./', '~', '/*', '#fragment'];

function pathVariant(path: string): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constant(path), weight: 10 },
    { arbitrary: fc.constantFrom(...PATH_SUFFIXES).map((suffix) => path + suffix), weight: 3 },
    { arbitrary: fc.constantFrom(...PATH_SUFFIXES).map((prefix) => `/x${prefix}${path}`), weight: 1 },
    { arbitrary: fc.constantFrom(path.toUpperCase(), `${path}/`, `/${path}`, `http://localhost${path}`, '*', 'localhost:443', `%2F${path.slice(1)}`), weight: 2 },
    { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map((text) => `${path}/${utf8Bytes(text)}`), weight: 1 },
    { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map((text) => `${path}/${percentEncoded(text)}`), weight: 1 },
    { arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((length) => `${path}/${'a'.repeat(length)}`), weight: 1 },
  );
}

const QUERIES = ['?__proto__[polluted]=yes', '?constructor[prototype][polluted]=yes', '?__proto__=x', '?a=%ff', '?a[b][c]=1', '?&&==&', '?usertoken', '?usertoken=&usertoken=x', '?x=%00'];

const query = fc.oneof(
  { arbitrary: fc.constant(''), weight: 8 },
  { arbitrary: fc.constantFrom(...QUERIES), weight: 2 },
  { arbitrary: anyText.map((text) => `?q=${percentEncoded(text)}`), weight: 1 },
);

const tenantValues = fc.oneof(
  { arbitrary: fc.constantFrom('default', 'acme'), weight: 6 },
  { arbitrary: fc.stringMatching(TENANT_NAME), weight: 2 },
  { arbitrary: fc.constantFrom('', ' ', 'a'.repeat(64), utf8Bytes('ü'), '../x', '__proto__', 'constructor', 'default ', 'DEFAULT', 'default, acme', 'hasOwnProperty'), weight: 2 },
);

/** Header lines a strict HTTP parser must refuse (or a lenient one must not trip over). */
const MALFORMED_LINES = ['NoColonHere', ' folded continuation', '\tfolded-tab', 'Bad Header: x', 'x-nul: a\u0000b', ': empty-name', 'x-bare-lf: a\nb: c', 'x-bare-cr: a\rb', 'Content-Length: abc', 'Content-Length: -1', `${utf8Bytes('x-ü')}: 1`, 'Host: second.example', 'Transfer-Encoding: gzip'];

const optional = <Value>(arbitrary: fc.Arbitrary<Value>, weight: number) =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight }, { arbitrary, weight: 1 });

function authorization(targets: FuzzTargets): fc.Arbitrary<string | undefined> {
  const kinds = Object.keys(targets.tokens);
  const token = fc.constantFrom(...kinds).map((kind) => targets.tokens[kind] as string);
  return fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 3 },
    { arbitrary: token.map((value) => `Bearer ${value}`), weight: 5 },
    { arbitrary: token.map((value) => `bearer  ${value}`), weight: 1 },
    { arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'Basic YWxpY2U6cHc=', 'Token x', `Bearer ${targets.tokens.valid} extra`, `Bearer ${utf8Bytes('ü')}`), weight: 1 },
  );
}

function headerList(targets: FuzzTargets, body: FuzzBody): fc.Arbitrary<Array<[string, string]>> {
  const contentType = fc.oneof(
    { arbitrary: fc.constant(body.contentType), weight: 9 },
    { arbitrary: fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=b', '*/*', utf8Bytes('application/jsön')), weight: 1 },
  );
  const big = fc.oneof(
    fc.integer({ min: 8000, max: 20_000 }).map((length): Array<[string, string]> => [['x-big', 'a'.repeat(length)]]),
    fc.integer({ min: 50, max: 150 }).map((count): Array<[string, string]> => Array.from({ length: count }, (_, index) => [`x-many-${index}`, 'v'])),
  );
  return fc
    .record({
      host: fc.oneof({ arbitrary: fc.constant('localhost'), weight: 12 }, { arbitrary: fc.constantFrom(undefined, '', 'evil.example', 'localhost:99999', utf8Bytes('ü.example'), 'a'.repeat(300)), weight: 1 }),
      tenant: optional(tenantValues, 2),
      secondTenant: optional(tenantValues, 20),
      authorization: authorization(targets),
      contentType,
      requestId: optional(fc.constantFrom('abc-123', 'a'.repeat(129), 'a b', utf8Bytes('ü'), '', 'x'.repeat(128)), 4),
      apiKey: optional(fc.constantFrom(targets.apiKey, 'wrong', '', `${targets.apiKey} `), 3),
      expect: optional(fc.constantFrom('100-continue', 'something-else'), 15),
      contentEncoding: optional(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown'), 15),
      forwardedFor: optional(fc.constantFrom('1.2.3.4', 'garbage', '::1, 10.0.0.1'), 10),
      referer: optional(fc.constantFrom('http://evil.example/', 'javascript:alert(1)', utf8Bytes('http://ü.example/')), 10),
      big: optional(big, 25),
    })
    .map((picked) => {
      const named: Array<[string, string | undefined]> = [
        ['Host', picked.host],
        ['tenant', picked.tenant],
        ['tenant', picked.secondTenant],
        ['Authorization', picked.authorization],
        ['Content-Type', picked.contentType],
        ['X-Request-Id', picked.requestId],
        ['x-api-key', picked.apiKey],
        ['Expect', picked.expect],
        ['Content-Encoding', picked.contentEncoding],
        ['X-Forwarded-For', picked.forwardedFor],
        ['Referer', picked.referer],
      ];
      const present = named.filter((pair): pair is [string, string] => pair[1] !== undefined);
      return [...present, ...(picked.big ?? [])];
    });
}

/** Requests aimed at the service's routes, most of them near misses, some pure noise. */
export function fuzzRequest(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return route.chain((aimed) =>
    fuzzBody(aimed.body, targets.password).chain((body) =>
      fc.record({
        aim: fc.constant(`${aimed.method} ${aimed.path}`),
        method: fc.oneof({ arbitrary: fc.constant(aimed.method), weight: 7 }, { arbitrary: fc.constantFrom(...METHODS), weight: 3 }),
        target: fc.tuple(pathVariant(aimed.path), aimed.query ?? query).map(([path, search]) => path + search),
        version: fc.oneof({ arbitrary: fc.constant('HTTP/1.1'), weight: 20 }, { arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'HTTP/x', ''), weight: 1 }),
        headers: headerList(targets, body),
        rawLines: fc.oneof({ arbitrary: fc.constant([]), weight: 12 }, { arbitrary: fc.array(fc.constantFrom(...MALFORMED_LINES), { minLength: 1, maxLength: 2 }), weight: 1 }),
        body: fc.constant(body),
        framing: fc.oneof({ arbitrary: fc.constant<Framing>('length'), weight: 16 }, { arbitrary: fc.constantFrom<Framing>('chunked', 'chunked', 'length and chunked', 'two lengths'), weight: 2 }),
      }),
    ),
  );
}

/** The bytes of `request`, always asking the server to close the connection after answering. */
export function requestBytes(request: FuzzRequest): Buffer {
  const body = request.body.bytes;
  const chunked = request.framing !== 'length' && request.framing !== 'two lengths';
  const framingLines =
    body.length === 0
      ? []
      : {
          length: [`Content-Length: ${body.length}`],
          chunked: ['Transfer-Encoding: chunked'],
          'length and chunked': [`Content-Length: ${body.length}`, 'Transfer-Encoding: chunked'],
          'two lengths': [`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`],
        }[request.framing];
  const lines = [
    `${request.method} ${request.target} ${request.version}`.trimEnd(),
    ...request.headers.map(([name, value]) => `${name}: ${value}`),
    ...request.rawLines,
    ...framingLines,
    'Connection: close',
  ];
  const payload = body.length > 0 && chunked ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]) : body;
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

/** A readable one-line account of a request, for failure reports. */
export function describeRequest(request: FuzzRequest): string {
  const headers = request.headers.map(([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 60)}… (${value.length})` : value}`);
  const target = request.target.length > 120 ? `${request.target.slice(0, 120)}… (${request.target.length})` : request.target;
  const body = request.body.bytes.length > 120 ? `${request.body.bytes.subarray(0, 120).toString('latin1')}… (${request.body.bytes.length} bytes)` : request.body.bytes.toString('latin1');
  return JSON.stringify({ aim: request.aim, line: `${request.method} ${target} ${request.version}`, headers, rawLines: request.rawLines, framing: request.framing, body: `${request.body.kind}: ${body}` });
}
