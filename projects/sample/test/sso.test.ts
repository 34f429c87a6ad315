import test, { type ExecutionContext } from 'ava';
import { start, type TestService } from 'spaceport/testing';
import { SSO_TOKENS, startSsoStandIn, type SsoStandIn } from './sso-stand-in.ts';

/**
 * The time limit the timeout tests wait out, on a service of their own: the other tests get a
 * generous one, so a loaded machine answering the stand-in slowly cannot fail them.
 */
const SSO_TIMEOUT_MS = 300;
const GENEROUS_TIMEOUT_MS = 10_000;
const LOGIN_PREFIX = '/user/login?token=';
const REDIRECT_SUFFIX = '&redirect=%2Fdashboard%3FheaderRender%3D0';
const PREFIXES = ['/api/sample', '/api/project'] as const;

let sso: SsoStandIn;
let service: TestService;
let impatient: TestService;
let aliceUid: string;
let bobUid: string;

/** The sample with the SSO stand-in configured, closed when the test ends. */
async function startSample(t: ExecutionContext, sso: Record<string, unknown>): Promise<TestService> {
  const app = await start({ project: 'sample', expert: { sso } });
  t.teardown(() => app.close());
  return app;
}

test.before(async () => {
  sso = await startSsoStandIn();
  service = await start({ project: 'sample', expert: { sso: { authUrl: sso.url, timeoutMs: GENEROUS_TIMEOUT_MS } } });
  impatient = await start({ project: 'sample', expert: { sso: { authUrl: sso.url, timeoutMs: SSO_TIMEOUT_MS } } });
  await service.createTenant('acme');
  aliceUid = (await service.createUser({ username: 'alice', password: 'alice-password-1', role: 'admin' })).uid;
  bobUid = (await service.createUser({ username: 'bob', password: 'bob-password-1' }, { tenant: 'acme' })).uid;
});
test.after.always(async () => {
  await service?.close();
  await impatient?.close();
  await sso?.close();
});

function home(prefix: string, userToken?: string, tenant?: string, served = service): Promise<Response> {
  const query = userToken === undefined ? '' : `?usertoken=${encodeURIComponent(userToken)}`;
  return served.get(`${prefix}/home${query}`, { redirect: 'manual', tenant });
}

/** The header and claims of a JWT, read without checking it (the service checks it). */
function decodeToken(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [header, claims] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>);
  return { header, claims };
}

/** The JWT inside a redirect that has exactly the specified shape, or a failed assertion. */
function tokenFromLocation(t: ExecutionContext, location: string | null): string {
  t.truthy(location);
  t.true(location?.startsWith(LOGIN_PREFIX), `Location ${location}`);
  t.true(location?.endsWith(REDIRECT_SUFFIX), `Location ${location}`);
  const token = (location ?? '').slice(LOGIN_PREFIX.length, -REDIRECT_SUFFIX.length);
  t.regex(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.is(location, `${LOGIN_PREFIX}${token}${REDIRECT_SUFFIX}`);
  return token;
}

async function assertFailure(t: ExecutionContext, response: Response, message: RegExp): Promise<void> {
  t.is(response.status, 500);
  t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
  t.is(response.headers.get('location'), null);
  const body = (await response.json()) as { success?: unknown; message?: unknown };
  t.deepEqual(Object.keys(body).sort(), ['message', 'success']);
  t.is(body.success, false);
  t.regex(String(body.message), message);
}

for (const prefix of PREFIXES) {
  // Serial: ava runs serial tests alone, before the concurrent ones, so counting the stand-in's
  // calls is exact.
  test.serial(`${prefix}/home signs the SSO user in and redirects to the login page`, async (t) => {
    const callsBefore = sso.calls.length;
    const response = await home(prefix, `${SSO_TOKENS.employeePrefix}alice`);
    t.is(response.status, 302);
    const token = tokenFromLocation(t, response.headers.get('location'));
    const claims = service.verifyToken(token);
    t.like(claims, { uid: aliceUid, tenant: service.tenant, username: 'alice', role: 'admin' });
    t.is(typeof claims.exp, 'number');
    t.is(decodeToken(token).header.alg, 'HS256');
    const call = sso.calls[callsBefore];
    t.is(sso.calls.length, callsBefore + 1);
    t.like(call, { method: 'POST', url: '/verify' });
    t.regex(call?.contentType ?? '', /^application\/json/);
    t.deepEqual(JSON.parse(call?.body ?? ''), { token: `${SSO_TOKENS.employeePrefix}alice` });
  });

  test(`${prefix}/home issues a token the service accepts`, async (t) => {
    const response = await home(prefix, `${SSO_TOKENS.employeePrefix}alice`);
    const token = tokenFromLocation(t, response.headers.get('location'));
    const upload = await service.post(`${prefix}/upload`, { as: { token } });
    t.is(upload.status, 400, 'authenticated, then refused for lack of a file');
  });

  test(`${prefix}/home signs the account of the request's tenant`, async (t) => {
    const response = await home(prefix, `${SSO_TOKENS.employeePrefix}bob`, 'acme');
    t.is(response.status, 302);
    const token = tokenFromLocation(t, response.headers.get('location'));
    const claims = service.verifyToken(token);
    t.like(claims, { uid: bobUid, tenant: 'acme', username: 'bob', role: 'member' });
  });

  test(`${prefix}/home does not find an account of another tenant`, async (t) => {
    await assertFailure(t, await home(prefix, `${SSO_TOKENS.employeePrefix}bob`), /user does not exist/);
    await assertFailure(t, await home(prefix, `${SSO_TOKENS.employeePrefix}alice`, 'acme'), /user does not exist/);
  });

  test.serial(`${prefix}/home without usertoken is 500 "required" and never calls the SSO server`, async (t) => {
    const callsBefore = sso.calls.length;
    await assertFailure(t, await home(prefix), /usertoken is required/);
    await assertFailure(t, await home(prefix, ''), /usertoken is required/);
    t.is(sso.calls.length, callsBefore);
  });

  test(`${prefix}/home with a repeated usertoken is 500 "required"`, async (t) => {
    const response = await service.get(`${prefix}/home?usertoken=a&usertoken=b`, { redirect: 'manual' });
    await assertFailure(t, response, /usertoken is required/);
  });

  test(`${prefix}/home with an unknown user is 500 "user does not exist"`, async (t) => {
    await assertFailure(t, await home(prefix, `${SSO_TOKENS.employeePrefix}ghost`), /user does not exist/);
  });

  test(`${prefix}/home when the SSO server refuses the token is 500`, async (t) => {
    await assertFailure(t, await home(prefix, SSO_TOKENS.refused), /single sign-on refused the token \(status 401\)/);
  });

  test(`${prefix}/home when the SSO server answers garbage is 500`, async (t) => {
    await assertFailure(t, await home(prefix, SSO_TOKENS.garbage), /not JSON/);
  });

  test(`${prefix}/home when the SSO reply names no employee is 500`, async (t) => {
    await assertFailure(t, await home(prefix, SSO_TOKENS.noEmployeeId), /no employeeId/);
  });

  test(`${prefix}/home when the SSO server never answers times out with 500`, async (t) => {
    const started = Date.now();
    await assertFailure(t, await home(prefix, SSO_TOKENS.silent, undefined, impatient), new RegExp(`did not answer within ${SSO_TIMEOUT_MS} ms`));
    // Half the handler limit (limits.handlerMs, 30 s): at load 46 on 2 cores the 300 ms took more than 5 s to answer.
    t.true(Date.now() - started < 15_000, 'bounded by sso.timeoutMs, well before the handler limit');
  });

  test(`${prefix}/home when the SSO reply stalls mid-body times out with 500`, async (t) => {
    await assertFailure(t, await home(prefix, SSO_TOKENS.stalledBody, undefined, impatient), new RegExp(`did not answer within ${SSO_TIMEOUT_MS} ms`));
  });
}

test('/home without sso.authUrl is 500 "not configured"', async (t) => {
  const unconfigured = await startSample(t, {});
  const response = await unconfigured.get('/api/sample/home?usertoken=x', { redirect: 'manual' });
  await assertFailure(t, response, /single sign-on is not configured/);
});

test('/home with an unreachable SSO server is 500 "unreachable"', async (t) => {
  // Port 1, where nothing listens: the port of a stand-in just closed was taken again by another
  // suite's server when eight ran at once, which answered 404.
  const unreachable = await startSample(t, { authUrl: 'http://127.0.0.1:1' });
  const response = await unreachable.get(`/api/project/home?usertoken=${SSO_TOKENS.employeePrefix}alice`, { redirect: 'manual' });
  await assertFailure(t, response, /single sign-on is unreachable/);
});

test.serial('/home joins sso.authUrl and /verify with one slash', async (t) => {
  const withSlash = await startSample(t, { authUrl: `${sso.url}/`, timeoutMs: GENEROUS_TIMEOUT_MS });
  await withSlash.createUser({ username: 'alice' });
  const callsBefore = sso.calls.length;
  const response = await withSlash.get(`/api/sample/home?usertoken=${SSO_TOKENS.employeePrefix}alice`, { redirect: 'manual' });
  t.is(response.status, 302);
  t.is(sso.calls.length, callsBefore + 1);
  t.is(sso.calls[callsBefore]?.url, '/verify');
});
