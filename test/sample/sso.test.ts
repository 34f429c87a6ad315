import jwt from 'jsonwebtoken';
import test from 'ava';
import { dropTestDatabase, TEST_JWT_SECRET, type TestService } from '../helpers/service.ts';
import { createAccount, SAMPLE_PREFIXES, startSampleService } from '../helpers/sample.ts';
import { SSO_TOKENS, startSsoStandIn, type SsoStandIn } from '../helpers/sso-stand-in.ts';

/**
 * The time limit the timeout tests wait out, on a service of their own: the other tests get a
 * generous one, so a loaded machine answering the stand-in slowly cannot fail them.
 */
const SSO_TIMEOUT_MS = 300;
const GENEROUS_TIMEOUT_MS = 10_000;
const LOGIN_PREFIX = '/user/login?token=';
const REDIRECT_SUFFIX = '&redirect=%2Fdashboard%3FheaderRender%3D0';

let sso: SsoStandIn;
let service: TestService;
let impatient: TestService;
let aliceUid: string;
let bobUid: string;

test.before(async () => {
  sso = await startSsoStandIn();
  service = await startSampleService(undefined, { sso: { authUrl: sso.url, timeoutMs: GENEROUS_TIMEOUT_MS } });
  impatient = await startSampleService(undefined, { sso: { authUrl: sso.url, timeoutMs: SSO_TIMEOUT_MS } });
  await service.runtime.knex('tenants').insert({ name: 'acme' });
  aliceUid = (await createAccount(service, 'default', { username: 'alice', password: 'alice-password-1', role: 'admin' })).uid;
  bobUid = (await createAccount(service, 'acme', { username: 'bob', password: 'bob-password-1' })).uid;
});
test.after.always(async () => {
  await service?.close();
  await impatient?.close();
  await sso?.close();
  await dropTestDatabase();
});

function home(prefix: string, userToken?: string, headers: Record<string, string> = {}, served = service): Promise<Response> {
  const query = userToken === undefined ? '' : `?usertoken=${encodeURIComponent(userToken)}`;
  return served.fetch(`${prefix}/home${query}`, { redirect: 'manual', headers });
}

/** The JWT inside a redirect that has exactly the specified shape, or a failed assertion. */
function tokenFromLocation(t: import('ava').ExecutionContext, location: string | null): string {
  t.truthy(location);
  t.true(location?.startsWith(LOGIN_PREFIX), `Location ${location}`);
  t.true(location?.endsWith(REDIRECT_SUFFIX), `Location ${location}`);
  const token = (location ?? '').slice(LOGIN_PREFIX.length, -REDIRECT_SUFFIX.length);
  t.regex(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.is(location, `${LOGIN_PREFIX}${token}${REDIRECT_SUFFIX}`);
  return token;
}

async function assertFailure(t: import('ava').ExecutionContext, response: Response, message: RegExp): Promise<void> {
  t.is(response.status, 500);
  t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
  t.is(response.headers.get('location'), null);
  const body = (await response.json()) as { success?: unknown; message?: unknown };
  t.deepEqual(Object.keys(body).sort(), ['message', 'success']);
  t.is(body.success, false);
  t.regex(String(body.message), message);
}

for (const prefix of SAMPLE_PREFIXES) {
  // Serial: ava runs serial tests alone, before the concurrent ones, so counting the stand-in's
  // calls is exact.
  test.serial(`${prefix}/home signs the SSO user in and redirects to the login page`, async (t) => {
    const callsBefore = sso.calls.length;
    const response = await home(prefix, `${SSO_TOKENS.employeePrefix}alice`);
    t.is(response.status, 302);
    const token = tokenFromLocation(t, response.headers.get('location'));
    const claims = jwt.verify(token, TEST_JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    t.like(claims, { uid: aliceUid, tenant: 'default', username: 'alice', role: 'admin' });
    t.is(typeof claims.exp, 'number');
    t.is(jwt.decode(token, { complete: true })?.header.alg, 'HS256');
    const call = sso.calls[callsBefore];
    t.is(sso.calls.length, callsBefore + 1);
    t.like(call, { method: 'POST', url: '/verify' });
    t.regex(call?.contentType ?? '', /^application\/json/);
    t.deepEqual(JSON.parse(call?.body ?? ''), { token: `${SSO_TOKENS.employeePrefix}alice` });
  });

  test(`${prefix}/home issues a token the service accepts`, async (t) => {
    const response = await home(prefix, `${SSO_TOKENS.employeePrefix}alice`);
    const token = tokenFromLocation(t, response.headers.get('location'));
    const upload = await service.fetch(`${prefix}/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    t.is(upload.status, 400, 'authenticated, then refused for lack of a file');
  });

  test(`${prefix}/home signs the account of the request's tenant`, async (t) => {
    const response = await home(prefix, `${SSO_TOKENS.employeePrefix}bob`, { tenant: 'acme' });
    t.is(response.status, 302);
    const token = tokenFromLocation(t, response.headers.get('location'));
    const claims = jwt.verify(token, TEST_JWT_SECRET) as jwt.JwtPayload;
    t.like(claims, { uid: bobUid, tenant: 'acme', username: 'bob', role: 'member' });
  });

  test(`${prefix}/home does not find an account of another tenant`, async (t) => {
    await assertFailure(t, await home(prefix, `${SSO_TOKENS.employeePrefix}bob`), /user does not exist/);
    await assertFailure(t, await home(prefix, `${SSO_TOKENS.employeePrefix}alice`, { tenant: 'acme' }), /user does not exist/);
  });

  test.serial(`${prefix}/home without usertoken is 500 "required" and never calls the SSO server`, async (t) => {
    const callsBefore = sso.calls.length;
    await assertFailure(t, await home(prefix), /usertoken is required/);
    await assertFailure(t, await home(prefix, ''), /usertoken is required/);
    t.is(sso.calls.length, callsBefore);
  });

  test(`${prefix}/home with a repeated usertoken is 500 "required"`, async (t) => {
    const response = await service.fetch(`${prefix}/home?usertoken=a&usertoken=b`, { redirect: 'manual' });
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
    await assertFailure(t, await home(prefix, SSO_TOKENS.silent, {}, impatient), new RegExp(`did not answer within ${SSO_TIMEOUT_MS} ms`));
    t.true(Date.now() - started < 5000, 'bounded by sso.timeoutMs, well before the handler limit');
  });

  test(`${prefix}/home when the SSO reply stalls mid-body times out with 500`, async (t) => {
    await assertFailure(t, await home(prefix, SSO_TOKENS.stalledBody, {}, impatient), new RegExp(`did not answer within ${SSO_TIMEOUT_MS} ms`));
  });
}

test('/home without sso.authUrl is 500 "not configured"', async (t) => {
  const unconfigured = await startSampleService(t);
  const response = await unconfigured.fetch('/api/sample/home?usertoken=x', { redirect: 'manual' });
  await assertFailure(t, response, /single sign-on is not configured/);
});

test('/home with an unreachable SSO server is 500 "unreachable"', async (t) => {
  const gone = await startSsoStandIn();
  await gone.close();
  const unreachable = await startSampleService(t, { sso: { authUrl: gone.url } });
  const response = await unreachable.fetch(`/api/project/home?usertoken=${SSO_TOKENS.employeePrefix}alice`, { redirect: 'manual' });
  await assertFailure(t, response, /single sign-on is unreachable/);
});

test.serial('/home joins sso.authUrl and /verify with one slash', async (t) => {
  const withSlash = await startSampleService(t, { sso: { authUrl: `${sso.url}/`, timeoutMs: GENEROUS_TIMEOUT_MS } });
  const callsBefore = sso.calls.length;
  const response = await withSlash.fetch(`/api/sample/home?usertoken=${SSO_TOKENS.employeePrefix}alice`, { redirect: 'manual' });
  t.is(response.status, 302);
  t.is(sso.calls.length, callsBefore + 1);
  t.is(sso.calls[callsBefore]?.url, '/verify');
});
