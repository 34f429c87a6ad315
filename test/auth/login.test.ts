import test from 'ava';
import jwt from 'jsonwebtoken';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { verifySystemToken } from '../../lib/auth/tokens.ts';
import { documentStore } from '../../lib/documents/index.ts';
import { signToken } from '../../lib/facilities/tokens.ts';
import { runInTenant } from '../../lib/tenancy/index.ts';
import { jsonPost, limitHeaders } from '../helpers/http.ts';
import { serviceForFile, startTestService, TEST_JWT_SECRET, type ServiceUnderTest } from '../helpers/service.ts';
import { refusalOf, schemaRefusal } from '../helpers/refusals.ts';

const PASSWORD = 'correct horse battery staple';
let service: ServiceUnderTest;
let aliceUid: string;
/** Every response body this file received, for the secrets check at the end. */
const bodies: string[] = [];

serviceForFile({ expert: { rateLimit: { login: { windowMs: 60_000, max: 1000 } } }, tenants: ['acme', 'globex'] }, async (started) => {
  service = started;
  ({ account: { uid: aliceUid } } = await saveAccount(service.runtime.tenantDatabase, 'acme', { username: 'alice', password: PASSWORD, role: 'admin' }));
});

async function login(body: unknown, tenant = 'acme'): Promise<{ response: Response; body: Record<string, unknown> }> {
  const response = await service.fetch('/auth/login', jsonPost(body, { tenant }));
  const text = await response.text();
  bodies.push(text, JSON.stringify([...response.headers]));
  return { response, body: JSON.parse(text) as Record<string, unknown> };
}

test.serial('good credentials give a system JWT with the specified claims', async (t) => {
  const { response, body } = await login({ username: 'alice', password: PASSWORD });
  t.is(response.status, 200);
  t.deepEqual(Object.keys(body).sort(), ['expiresIn', 'success', 'token']);
  t.is(body.success, true);
  t.is(body.expiresIn, 12 * 3600);
  const claims = jwt.verify(body.token as string, TEST_JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
  t.deepEqual(Object.keys(claims).sort(), ['exp', 'iat', 'role', 'tenant', 'uid', 'username']);
  t.like(claims, { uid: aliceUid, tenant: 'acme', username: 'alice', role: 'admin' });
  t.is((claims.exp as number) - (claims.iat as number), 12 * 3600);
  t.is(jwt.decode(body.token as string, { complete: true })?.header.alg, 'HS256');
  t.like(limitHeaders(response), { limit: 1000 });
});

test.serial('a wrong password and an unknown user get the very same 401', async (t) => {
  const wrong = await login({ username: 'alice', password: 'wrong' });
  const unknown = await login({ username: 'mallory', password: PASSWORD });
  for (const { response, body } of [wrong, unknown]) {
    t.is(response.status, 401);
    t.deepEqual(body, { error: 'invalid username or password' });
  }
  t.is(wrong.response.headers.get('content-length'), unknown.response.headers.get('content-length'));
});

test.serial('credentials count only in their own tenant', async (t) => {
  t.is((await login({ username: 'alice', password: PASSWORD }, 'globex')).response.status, 401);
  t.is((await login({ username: 'alice', password: PASSWORD }, 'default')).response.status, 401);
  t.is((await login({ username: 'alice', password: PASSWORD }, 'nowhere')).response.status, 400);
});

const BAD_BODIES: Array<[string, unknown, string]> = [
  ['no username', { password: PASSWORD }, 'body.username: is required'],
  ['no password', { username: 'alice' }, 'body.password: is required'],
  ['an operator object as username', { username: { $ne: '' }, password: PASSWORD }, 'body.username: must be a string'],
  ['an operator object as password', { username: 'alice', password: { $gt: '' } }, 'body.password: must be a string'],
  ['a number as username', { username: 5, password: PASSWORD }, 'body.username: must be a string'],
  ['an array body', [{ username: 'alice', password: PASSWORD }], 'body: must be a JSON object'],
  ['a string body', '"alice"', 'body: must be a JSON object'],
  ['a null body', 'null', 'body: must be a JSON object'],
  ['malformed JSON', '{"username": ', 'malformed JSON body'],
];

for (const [title, body, error] of BAD_BODIES) {
  test.serial(`login with ${title} is 400`, async (t) => {
    const { response, body: answer } = await login(body);
    t.is(response.status, 400);
    t.deepEqual(answer, refusalOf(error));
  });
}

test.serial('login with neither username nor password names both', async (t) => {
  const { response, body } = await login({});
  t.is(response.status, 400);
  t.deepEqual(body, schemaRefusal('body.username: is required', 'body.password: is required'));
});

test.serial('a username with NUL or a lone surrogate is the usual 401, not a 500', async (t) => {
  for (const username of ['alice\u0000', '\ud800']) {
    const { response, body } = await login({ username, password: PASSWORD });
    t.is(response.status, 401);
    t.deepEqual(body, { error: 'invalid username or password' });
  }
});

test.serial('an empty body is 400', async (t) => {
  const response = await service.fetch('/auth/login', { method: 'POST', headers: { tenant: 'acme' } });
  t.is(response.status, 400);
  t.deepEqual(await response.json(), refusalOf('body: must be a JSON object'));
});

test.serial('a login form or JSON sent as text/plain is 400 saying the body must be JSON, not "username is required"', async (t) => {
  const credentials = { username: 'alice', password: PASSWORD };
  const sent: Array<[string, string]> = [
    ['application/x-www-form-urlencoded', new URLSearchParams(credentials).toString()],
    ['text/plain;charset=UTF-8', JSON.stringify(credentials)],
  ];
  for (const [contentType, body] of sent) {
    const response = await service.fetch('/auth/login', { method: 'POST', headers: { tenant: 'acme', 'content-type': contentType }, body });
    t.is(response.status, 400, contentType);
    t.deepEqual(await response.json(), { error: 'request body must be JSON (Content-Type: application/json)' });
  }
});

test.serial('expiresIn is auth.tokenTtl in seconds, and a tokenTtl of digits counts seconds, not milliseconds', async (t) => {
  for (const [tokenTtl, seconds] of [['3600', 3600], ['90m', 5400], [120, 120]] as const) {
    const other = await startTestService(t, { expert: { auth: { tokenTtl } } });
    const response = await other.fetch('/auth/login', jsonPost({ username: 'alice', password: PASSWORD }, { tenant: 'acme' }));
    const body = (await response.json()) as { token: string; expiresIn: number };
    t.is(body.expiresIn, seconds, String(tokenTtl));
    const claims = verifySystemToken(other.runtime, body.token);
    t.is(claims.exp - claims.iat, seconds);
  }
});

test.serial('GET /auth/login is 405 with Allow', async (t) => {
  const response = await service.fetch('/auth/login', { headers: { tenant: 'acme' } });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'POST');
});

test.serial('a login token passes the service verification', async (t) => {
  const { body } = await login({ username: 'alice', password: PASSWORD });
  t.like(verifySystemToken(service.runtime, body.token as string), { uid: aliceUid, tenant: 'acme' });
});

// Last, so that it sees the log lines and answers of every test above.
test.serial('no response or log line holds the password, its hash or the JWT secret', async (t) => {
  await login({ username: 'alice', password: `${PASSWORD}-typo` });
  await service.fetch(`/auth/login?password=${encodeURIComponent(PASSWORD)}`, jsonPost({ username: 'alice', password: PASSWORD }, { tenant: 'acme' }));
  const [row] = await service.runtime.knex('documents').where({ tenant: 'acme', collection: 'accounts' }).select('doc');
  const hash = String((row as { doc: { password: string } }).doc.password);
  const [, , , , salt, key] = hash.split('$');
  await new Promise((resolve) => setTimeout(resolve, 50));
  const everything = `${service.logText()}\n${bodies.join('\n')}`;
  t.true(service.logs().some((entry) => entry.url === '/auth/login'));
  for (const secret of [PASSWORD, hash, salt as string, key as string, TEST_JWT_SECRET]) t.false(everything.includes(secret), 'a secret leaked');
});

/** Sets a field of alice's stored account document directly, as a handler with `db` could. */
async function setAliceField(field: string, value: unknown): Promise<void> {
  await documentStore(service.runtime.tenantDatabase, 'acme').collection('accounts').updateOne({ username: 'alice' }, { $set: { [field]: value } });
}

test.serial('a tenant written into an account document does not reach the token: it is the request\'s (the cross-tenant token of the review)', async (t) => {
  await setAliceField('tenant', 'globex');
  const { response, body } = await login({ username: 'alice', password: PASSWORD });
  await documentStore(service.runtime.tenantDatabase, 'acme').collection('accounts').updateOne({ username: 'alice' }, { $unset: { tenant: '' } });
  t.is(response.status, 200);
  t.like(verifySystemToken(service.runtime, body.token as string), { tenant: 'acme', uid: aliceUid });
});

test.serial('signToken inside a request refuses an account that names another tenant, and signs for the request\'s own', async (t) => {
  const sign = (account: Record<string, unknown>) => runInTenant(service.runtime, 'acme', () => signToken(account));
  const refused = await t.throwsAsync(sign({ uid: 'u1', tenant: 'globex' }));
  t.regex(refused?.message ?? '', /names tenant "globex", but the request is of tenant "acme"/);
  t.like(verifySystemToken(service.runtime, await sign({ uid: 'u1', tenant: 'acme' })), { tenant: 'acme' });
  t.like(verifySystemToken(service.runtime, await sign({ uid: 'u1' })), { tenant: 'acme' });
});

test.serial('a stored hash with absurd costs is a 401 like a wrong password, never a 500', async (t) => {
  const saved = (await documentStore(service.runtime.tenantDatabase, 'acme').collection('accounts').findOne({ username: 'alice' }))?.password as string;
  const [, , , , salt, key] = saved.split('$');
  try {
    for (const costs of ['1$1$1', '16384$8$1000', '1073741824$8$1', '16384$1000$1', 'x$y$z']) {
      await setAliceField('password', `scrypt$${costs}$${salt}$${key}`);
      const { response, body } = await login({ username: 'alice', password: PASSWORD });
      t.is(response.status, 401, costs);
      t.deepEqual(body, { error: 'invalid username or password' });
    }
  } finally {
    await setAliceField('password', saved);
  }
  t.is((await login({ username: 'alice', password: PASSWORD })).response.status, 200);
});
