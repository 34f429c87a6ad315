import test from 'ava';
import { start, type TestService } from 'spaceport/testing';

const ALICE_PASSWORD = 'alice-plain-password-4711';
const BOB_PASSWORD = 'bob-plain-password-0815';
/** Every sample route answers at both mounts: the sample is the only, so the default, project. */
const PREFIXES = ['/api/sample', '/api/project'] as const;

let app: TestService;
let aliceHash: string;

/** The stored password hash of an account, for leak checks. */
async function storedPasswordHash(username: string, tenant = app.tenant): Promise<string> {
  const account = await app.documents(tenant).collection('accounts').findOne({ username });
  if (typeof account?.password !== 'string') throw new Error(`no account ${username} in ${tenant}`);
  return account.password;
}

test.before(async () => {
  app = await start({ project: 'sample' });
  await app.createTenant('acme');
  await app.createTenant('globex');
  await app.createUser({ username: 'alice', password: ALICE_PASSWORD, role: 'admin', name: 'Alice', email: 'alice@example.com' });
  await app.createUser({ username: 'carol', password: 'carol-plain-password', name: 'Carol' });
  await app.createUser({ username: 'bob', password: BOB_PASSWORD, name: 'Bob of Acme' }, { tenant: 'acme' });
  aliceHash = await storedPasswordHash('alice');
});
test.after.always(() => app?.close());

interface AccountAnswer {
  success: boolean;
  data?: Array<Record<string, unknown>>;
  total?: number;
  message?: string;
}

for (const prefix of PREFIXES) {
  const getOneAccount = (json: unknown, tenant?: string) => app.post(`${prefix}/getOneAccount`, { json, tenant });

  test(`${prefix}/getOneAccount finds the account by username, without its password`, async (t) => {
    const response = await getOneAccount({ EMPLOYEE_ID: 'alice' });
    t.is(response.status, 200);
    t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
    const text = await response.text();
    const body = JSON.parse(text) as AccountAnswer;
    t.is(body.success, true);
    t.is(body.total, 1);
    t.is(body.data?.length, 1);
    const [account] = body.data ?? [];
    t.like(account, { username: 'alice', role: 'admin', name: 'Alice', email: 'alice@example.com' });
    t.false('password' in (account ?? {}));
    t.false(text.includes(ALICE_PASSWORD));
    t.false(text.includes(aliceHash));
  });

  test(`${prefix}/getOneAccount answers an empty list for an unknown username`, async (t) => {
    const response = await getOneAccount({ EMPLOYEE_ID: 'nobody' });
    t.is(response.status, 200);
    t.deepEqual(await response.json(), { success: true, data: [], total: 0 });
  });

  const invalidBodies: Array<[string, unknown]> = [
    ['a missing EMPLOYEE_ID', {}],
    ['an operator object', { EMPLOYEE_ID: { $ne: '' } }],
    ['an $exists operator', { EMPLOYEE_ID: { $exists: true } }],
    ['a number', { EMPLOYEE_ID: 42 }],
    ['an array', { EMPLOYEE_ID: ['alice'] }],
    ['null', { EMPLOYEE_ID: null }],
    ['an empty string', { EMPLOYEE_ID: '' }],
  ];
  for (const [label, body] of invalidBodies) {
    test(`${prefix}/getOneAccount with ${label} is 500 "required" and lists nothing`, async (t) => {
      const response = await getOneAccount(body);
      t.is(response.status, 500);
      const text = await response.text();
      const answer = JSON.parse(text) as AccountAnswer;
      t.is(answer.success, false);
      t.regex(answer.message ?? '', /EMPLOYEE_ID is required/);
      t.deepEqual(Object.keys(answer).sort(), ['message', 'success']);
      t.false(text.includes('alice'));
      t.false(text.includes('carol'));
    });
  }

  test(`${prefix}/getOneAccount with no body at all is 500 "required"`, async (t) => {
    const response = await app.post(`${prefix}/getOneAccount`);
    t.is(response.status, 500);
    t.like(await response.json(), { success: false, message: 'EMPLOYEE_ID is required (a non-empty string)' });
  });

  test(`${prefix}/getOneAccount reads a urlencoded form too`, async (t) => {
    const response = await app.post(`${prefix}/getOneAccount`, { body: new URLSearchParams({ EMPLOYEE_ID: 'carol' }) });
    t.is(response.status, 200);
    const body = (await response.json()) as AccountAnswer;
    t.is(body.total, 1);
    t.is(body.data?.[0]?.username, 'carol');
    t.false('password' in (body.data?.[0] ?? {}));
  });

  test(`${prefix}/getOneAccount only sees the request's tenant`, async (t) => {
    const fromOwnTenant = await getOneAccount({ EMPLOYEE_ID: 'bob' });
    t.deepEqual(await fromOwnTenant.json(), { success: true, data: [], total: 0 });
    const fromGlobex = await getOneAccount({ EMPLOYEE_ID: 'bob' }, 'globex');
    t.deepEqual(await fromGlobex.json(), { success: true, data: [], total: 0 });
    const fromAcme = await getOneAccount({ EMPLOYEE_ID: 'bob' }, 'acme');
    const text = await fromAcme.text();
    const body = JSON.parse(text) as AccountAnswer;
    t.is(body.total, 1);
    t.like(body.data?.[0], { username: 'bob', name: 'Bob of Acme' });
    t.false(text.includes(BOB_PASSWORD));
    t.false(text.includes(await storedPasswordHash('bob', 'acme')));
    const aliceFromAcme = await getOneAccount({ EMPLOYEE_ID: 'alice' }, 'acme');
    t.deepEqual(await aliceFromAcme.json(), { success: true, data: [], total: 0 });
  });

  test(`${prefix}/getOneAccount with an unknown tenant is 400`, async (t) => {
    const response = await getOneAccount({ EMPLOYEE_ID: 'alice' }, 'initech');
    t.is(response.status, 400);
    t.deepEqual(await response.json(), { error: 'unknown tenant' });
  });

  test(`${prefix}/getOneAccount with malformed JSON is 400`, async (t) => {
    const response = await app.post(`${prefix}/getOneAccount`, { headers: { 'content-type': 'application/json' }, body: '{"EMPLOYEE_ID": ' });
    t.is(response.status, 400);
    t.is(typeof ((await response.json()) as { error?: unknown }).error, 'string');
  });

  test(`${prefix}/getOneAccount is public and rate-limited as such`, async (t) => {
    const response = await getOneAccount({ EMPLOYEE_ID: 'alice' });
    t.is(response.status, 200);
    t.truthy(response.headers.get('ratelimit-limit'));
    t.truthy(response.headers.get('ratelimit-remaining'));
  });

  test(`${prefix}/heartbeat answers the text "success"`, async (t) => {
    const response = await app.get(`${prefix}/heartbeat`);
    t.is(response.status, 200);
    t.regex(response.headers.get('content-type') ?? '', /^text\/plain/);
    t.is(await response.text(), 'success');
  });

  test(`${prefix}/heartbeat answers HEAD without a body, and other methods with 405`, async (t) => {
    const head = await app.fetch(`${prefix}/heartbeat`, { method: 'HEAD' });
    t.is(head.status, 200);
    t.is(await head.text(), '');
    const post = await app.post(`${prefix}/heartbeat`);
    t.is(post.status, 405);
    t.regex(post.headers.get('allow') ?? '', /GET/);
  });
}

test('no answer or log line carries a password or its hash', async (t) => {
  for (const prefix of PREFIXES) {
    await app.post(`${prefix}/getOneAccount`, { json: { EMPLOYEE_ID: 'alice' } });
    await app.post(`${prefix}/getOneAccount`, { json: { EMPLOYEE_ID: { $ne: '' } } });
  }
  const logs = app.logText();
  t.true(logs.length > 0);
  for (const secret of [ALICE_PASSWORD, BOB_PASSWORD, aliceHash]) t.false(logs.includes(secret));
});
