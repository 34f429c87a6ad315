import test from 'ava';
import path from 'node:path';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { startWithProjects, writeTree } from '../helpers/projects.ts';

let service: ServiceUnderTest;
let projectDir: string;
test.before(async () => {
  const root = writeTree({
    'projects/shop/api/routes.js': [
      "import { missingOrder } from './handlers/orders.js';",
      'export default [',
      "  { method: 'GET', path: '/orders/:id', skipAuth: true, function: missingOrder },",
      "  { method: 'GET', path: '/later', skipAuth: true, function: async () => { await new Promise((resolve) => setTimeout(resolve, 5)); throw new RangeError('too late'); } },",
      "  { method: 'GET', path: '/bad-gateway', skipAuth: true, function: (req, res, next) => { res.status(502); next(new Error('upstream said no')); } },",
      "  { method: 'GET', path: '/frozen', skipAuth: true, function: () => { throw Object.freeze(Object.assign(new Error('sealed shut'), { status: 'teapot', expose: true })); } },",
      "  { method: 'GET', path: '/gone', skipAuth: true, function: () => { throw Object.assign(new Error('order archived'), { status: 410 }); } },",
      "  { method: 'GET', path: '/busy/:expose', skipAuth: true, function: (req) => { throw Object.assign(new Error('queue full'), { status: 503, expose: req.params.expose === 'exposed', headers: { 'Retry-After': '5' } }); } },",
      "  { method: 'GET', path: '/bad-header/:kind', skipAuth: true, function: (req) => { throw Object.assign(new Error('slow down'), { status: 429, headers: { 'Retry-After': '7', ...BAD_HEADERS[req.params.kind] } }); } },",
      "  { method: 'GET', path: '/bad-header-next', skipAuth: true, function: (req, res, next) => next(Object.assign(new Error('already taken'), { status: 409, headers: BAD_HEADERS.newline })) },",
      "  { method: 'GET', path: '/bad-header-auth', auth: () => { throw Object.assign(new Error('no entry'), { status: 403, headers: BAD_HEADERS.latin1 }); }, function: (req, res) => res.send('in') },",
      "  { method: 'GET', path: '/bad-header-auth-next', auth: (req, res, next) => next(Object.assign(new Error('no entry'), { status: 403, headers: BAD_HEADERS.name })), function: (req, res) => res.send('in') },",
      "  { method: 'GET', path: '/hostile-headers/unlistable', skipAuth: true, function: () => { throw Object.assign(new Error('no tea'), { status: 418, headers: new Proxy({}, { ownKeys() { throw new Error('cannot list'); } }) }); } },",
      "  { method: 'GET', path: '/hostile-headers/getter', skipAuth: true, function: (req, res, next) => next(Object.assign(new Error('not yours'), { status: 403, headers: { get 'X-A'() { throw new Error('cannot read'); } } })) },",
      "  { method: 'GET', path: '/list-headers', skipAuth: true, function: () => { throw Object.assign(new Error('try again'), { status: 400, headers: { 'Set-Cookie': ['a=1', 'b=2\\n'], 'X-Num': 5, 'X-Obj': { a: 1 } } }); } },",
      "  { method: 'GET', path: '/file-bad-header', skipAuth: true, function: (req, res) => res.sendFile(import.meta.filename, { headers: BAD_HEADERS.newline }) },",
      "  { method: 'GET', path: '/download-bad-header', skipAuth: true, function: (req, res) => res.download(import.meta.filename, 'routes.js', { headers: BAD_HEADERS.latin1 }) },",
      "  { method: 'GET', path: '/system-error/:how', skipAuth: true, function: async (req, res) => {",
      "    try { await (await import('node:fs/promises')).readFile('/nonexistent/spaceport-orders.json'); } catch (error) {",
      "      if (req.params.how === 'status') throw Object.assign(error, { status: 404 });",
      "      if (req.params.how === 'exposed') throw Object.assign(error, { status: 404, expose: true });",
      "      if (req.params.how === 'hidden') throw Object.assign(new Error('table t_secret'), { status: 409, expose: false });",
      "      res.status(400);",
      "      throw error;",
      "    }",
      "  } },",
      '];',
      'const BAD_HEADERS = {',
      "  newline: { 'X-Reason': 'a\\r\\nSet-Cookie: stolen=1' },",
      "  latin1: { 'X-Reason': 'caf\\u2603' },",
      "  name: { 'Bad Name': 'x', 'X-Fine': 'kept' },",
      "  control: { 'X-Reason': 'nul\\u0000' },",
      '};',
      '',
    ].join('\n'),
    'projects/shop/api/handlers/orders.js': 'export function missingOrder(req, res) {\n  const order = undefined;\n  return res.json(order.id);\n}\n',
  });
  projectDir = path.join(root, 'projects', 'shop');
  service = await startWithProjects(undefined, path.join(root, 'projects'));
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

/** The log lines written for one request, found by its id. */
async function failedRequestLog(pathname: string, requestId: string): Promise<{ status: number; body: unknown; lines: Array<Record<string, unknown>> }> {
  const response = await service.fetch(pathname, { headers: { 'x-request-id': requestId } });
  const body = await response.json();
  const lines = service.logs().filter((line) => line.requestId === requestId && line.msg !== 'request');
  return { status: response.status, body, lines };
}

function stackOf(line: Record<string, unknown> | undefined): string {
  return String((line?.err as { stack?: unknown } | undefined)?.stack);
}

test('a handler error is logged once, naming project, route and request id, with the route file’s frame first', async (t) => {
  const { status, body, lines } = await failedRequestLog('/api/shop/orders/7', 'handler-error-1');
  t.is(status, 500);
  t.deepEqual(body, { success: false, message: 'Internal Server Error' });
  t.is(lines.length, 1);
  t.like(lines[0], { level: 50, project: 'shop', route: 'GET /orders/:id', requestId: 'handler-error-1' });
  t.like(lines[0].err, { type: 'TypeError', message: "Cannot read properties of undefined (reading 'id')" });
  const stack = stackOf(lines[0]).split('\n');
  t.is(stack[0], "TypeError: Cannot read properties of undefined (reading 'id')");
  t.true(stack[1].includes(`${path.join(projectDir, 'api', 'handlers', 'orders.js')}:3:`), stack[1]);
  t.false(stackOf(lines[0]).includes('caused by'));
});

test('a rejection after an await is named the same way, its frame in the route file', async (t) => {
  const { status, lines } = await failedRequestLog('/api/shop/later', 'handler-error-2');
  t.is(status, 500);
  t.is(lines.length, 1);
  t.like(lines[0], { project: 'shop', route: 'GET /later', err: { type: 'RangeError', message: 'too late' } });
  t.true(stackOf(lines[0]).split('\n')[1].includes(`${path.join(projectDir, 'api', 'routes.js')}:4:`));
});

test('next(error) after res.status(502) keeps that status, and the log keeps the handler’s error', async (t) => {
  const { status, body, lines } = await failedRequestLog('/api/shop/bad-gateway', 'handler-error-3');
  t.is(status, 502);
  t.deepEqual(body, { success: false, message: 'Internal Server Error' });
  t.like(lines[0], { project: 'shop', route: 'GET /bad-gateway', err: { type: 'Error', message: 'upstream said no' } });
  t.true(stackOf(lines[0]).split('\n')[1].includes(`${path.join(projectDir, 'api', 'routes.js')}:5:`));
});

test('a frozen error with a status that is not one is a 500 all the same, its message kept out of the answer', async (t) => {
  const { status, body, lines } = await failedRequestLog('/api/shop/frozen', 'handler-error-6');
  t.is(status, 500);
  t.deepEqual(body, { success: false, message: 'Internal Server Error' });
  t.like(lines[0], { project: 'shop', route: 'GET /frozen', err: { message: 'sealed shut', status: 500 } });
});

test('a 503 a handler throws keeps its status, answered with the generic body and none of its headers, expose or not', async (t) => {
  for (const expose of ['hidden', 'exposed']) {
    const response = await service.fetch(`/api/shop/busy/${expose}`);
    t.is(response.status, 503, expose);
    t.is(response.headers.get('retry-after'), null, expose);
    t.deepEqual(await response.json(), { success: false, message: 'Internal Server Error' }, expose);
  }
});

test('a 4xx a handler throws is told on the request line, naming the route', async (t) => {
  const { status, body, lines } = await failedRequestLog('/api/shop/gone', 'handler-error-4');
  t.is(status, 410);
  t.deepEqual(body, { error: 'order archived' });
  t.is(lines.length, 0, 'no line besides the request line');
  const line = service.logs().find((entry) => entry.requestId === 'handler-error-4' && entry.msg === 'request');
  t.like(line, { level: 30, project: 'shop', route: 'GET /gone', status: 410, error: 'order archived' });
});

test('a 4xx from a Node system error (its text names a path) or saying expose: false answers its status text; the request line keeps the message', async (t) => {
  const cases: Array<[string, number, string, string]> = [
    ['status', 404, 'Not Found', 'ENOENT'],
    ['res-status', 400, 'Bad Request', 'ENOENT'],
    ['hidden', 409, 'Conflict', 'table t_secret'],
  ];
  for (const [how, status, answered, logged] of cases) {
    const requestId = `system-error-${how}`;
    const response = await failedRequestLog(`/api/shop/system-error/${how}`, requestId);
    t.like(response, { status, body: { error: answered } }, how);
    t.false(JSON.stringify(response.body).includes('/nonexistent'), how);
    const line = service.logs().find((entry) => entry.requestId === requestId && entry.msg === 'request');
    t.regex(String(line?.error), new RegExp(logged), how);
  }
  const exposed = await failedRequestLog('/api/shop/system-error/exposed', 'system-error-exposed');
  t.like(exposed, { status: 404, body: { error: "ENOENT: no such file or directory, open '/nonexistent/spaceport-orders.json'" } }, 'expose: true shows it');
});

test('the default mount names the project too', async (t) => {
  const { lines } = await failedRequestLog('/api/project/orders/8', 'handler-error-5');
  t.like(lines[0], { project: 'shop', route: 'GET /orders/:id' });
});

/** An error answer whose headers Node would refuse: the §7 answer all the same, the bad header dropped, and logged. */
const BAD_HEADER_CASES: Array<[string, string, number, Record<string, unknown>]> = [
  ['a value with CR LF, thrown by a handler', '/api/shop/bad-header/newline', 429, { error: 'slow down' }],
  ['a value beyond latin1, thrown by a handler', '/api/shop/bad-header/latin1', 429, { error: 'slow down' }],
  ['an invalid name, thrown by a handler', '/api/shop/bad-header/name', 429, { error: 'slow down' }],
  ['a NUL in a value, thrown by a handler', '/api/shop/bad-header/control', 429, { error: 'slow down' }],
  ['a value with CR LF, passed to next() by a handler', '/api/shop/bad-header-next', 409, { error: 'already taken' }],
  ['a value beyond latin1, thrown by custom auth', '/api/shop/bad-header-auth', 403, { error: 'no entry' }],
  ['an invalid name, passed to next() by custom auth', '/api/shop/bad-header-auth-next', 403, { error: 'no entry' }],
];

for (const [title, pathname, expectedStatus, expectedBody] of BAD_HEADER_CASES) {
  test(`an error whose headers hold ${title} is answered as SPEC §7 says, the bad header dropped, and logged`, async (t) => {
    const requestId = `bad-header-${pathname.replaceAll('/', '-')}`;
    const response = await service.fetch(pathname, { headers: { 'x-request-id': requestId } });
    t.is(response.status, expectedStatus);
    t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
    t.deepEqual(await response.json(), expectedBody);
    t.is(response.headers.get('x-reason'), null);
    t.is(response.headers.get('set-cookie'), null);
    if (pathname.endsWith('/name')) t.is(response.headers.get('x-fine'), 'kept');
    if (expectedStatus === 429) t.is(response.headers.get('retry-after'), '7');
    const lines = service.logs().filter((line) => line.requestId === requestId);
    t.like(
      lines.find((line) => line.msg === 'request'),
      { status: expectedStatus, project: 'shop', error: expectedBody.error },
    );
    const errorLine = lines.find((line) => line.msg !== 'request');
    t.like(errorLine, { level: 50, project: 'shop' }, 'an error line tells of the header dropped');
    t.regex(String(errorLine?.msg), /header/);
  });
}

for (const [kind, status, error] of [['unlistable', 418, 'no tea'], ['getter', 403, 'not yours']] as const) {
  test(`an error whose headers throw when read (${kind}) is answered ${status} with its §7 body, and logged`, async (t) => {
    const requestId = `hostile-headers-${kind}`;
    const response = await service.fetch(`/api/shop/hostile-headers/${kind}`, { headers: { 'x-request-id': requestId } });
    t.is(response.status, status);
    t.deepEqual(await response.json(), { error });
    t.is(response.headers.get('x-request-id'), requestId);
    const lines = service.logs().filter((line) => line.requestId === requestId);
    t.like(lines.find((line) => line.msg === 'request'), { status, error });
    t.regex(String(lines.find((line) => line.msg !== 'request')?.msg), /headers/, 'an error line tells of the headers left out');
  });
}

test('an error header given as a list sends each valid item; values that are neither text, numbers nor lists are left out and logged', async (t) => {
  const requestId = 'list-headers';
  const response = await service.fetch('/api/shop/list-headers', { headers: { 'x-request-id': requestId } });
  t.is(response.status, 400);
  t.deepEqual(response.headers.getSetCookie(), ['a=1']);
  t.is(response.headers.get('x-num'), '5');
  t.is(response.headers.get('x-obj'), null);
  const errorLine = service.logs().find((line) => line.requestId === requestId && line.msg !== 'request');
  t.like(errorLine, { headers: ['Set-Cookie', 'X-Obj'] });
});

for (const kind of ['file', 'download']) {
  test(`res.${kind === 'file' ? 'sendFile' : 'download'} with a header Node would refuse fails that request alone (500), never the service`, async (t) => {
    const requestId = `bad-header-${kind}`;
    const response = await service.fetch(`/api/shop/${kind}-bad-header`, { headers: { 'x-request-id': requestId } });
    t.is(response.status, 500);
    t.deepEqual(await response.json(), { success: false, message: 'Internal Server Error' });
    const lines = service.logs().filter((line) => line.requestId === requestId);
    t.like(lines.find((line) => line.msg === 'request'), { status: 500, project: 'shop' });
    t.like(lines.find((line) => line.msg !== 'request'), { level: 50, err: { code: 'ERR_INVALID_CHAR' } });
    t.is((await service.fetch('/api/shop/gone')).status, 410, 'the service still answers');
  });
}
