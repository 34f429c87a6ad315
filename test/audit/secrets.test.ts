import test from 'ava';
import { cli } from '../helpers/cli.ts';
import { serviceForFile, testDatabaseUrl, TEST_JWT_SECRET, type ServiceUnderTest } from '../helpers/service.ts';
import { call } from '../helpers/spaces.ts';

let service: ServiceUnderTest;

serviceForFile({ expert: { spaces: { enabled: true } }, env: { LOG_LEVEL: 'debug' } }, (started) => {
  service = started;
});

const FIRST_PASSWORD = 'first-Pa55word-for-the-audit';
const SECOND_PASSWORD = 'second-Pa55word-for-the-audit';

async function storedHash(username: string): Promise<string> {
  const row = await service.runtime.knex('documents').where({ tenant: 'default', collection: 'accounts' }).whereRaw("doc->>'username' = ?", [username]).first('doc');
  return String((row as { doc: { password: string } }).doc.password);
}

/** The secrets, and the parts of a hash that would give it away on their own (its salt, its digest). */
function secretsOf(hashes: readonly string[]): string[] {
  return [FIRST_PASSWORD, SECOND_PASSWORD, TEST_JWT_SECRET, ...hashes, ...hashes.flatMap((hash) => hash.split('$').filter((part) => part.length >= 16))];
}

test('no password, hash or JWT secret in /audit, in the events stored, in the service log or in the output of make user', async (t) => {
  const databaseUrl = await testDatabaseUrl();
  const made = await cli(['user', '--tenant', 'default', '--username', 'auditor', '--password', FIRST_PASSWORD, '--role', 'admin'], databaseUrl, { LOG_LEVEL: 'debug' });
  t.is(made.code, 0, made.stderr);
  const firstHash = await storedHash('auditor');
  const changed = await cli(['user', '--tenant', 'default', '--username', 'auditor', '--password', SECOND_PASSWORD], databaseUrl, { LOG_LEVEL: 'debug' });
  t.is(changed.code, 0, changed.stderr);
  const secondHash = await storedHash('auditor');
  t.not(firstHash, secondHash);

  // The HTTP side: passwords go through the login (a wrong one too), then the token acts.
  const refused = await call(service, 'POST', '/auth/login', { as: { tenant: 'default' }, json: { username: 'auditor', password: FIRST_PASSWORD } });
  t.is(refused.status, 401);
  const login = await call(service, 'POST', '/auth/login', { as: { tenant: 'default' }, json: { username: 'auditor', password: SECOND_PASSWORD } });
  t.is(login.status, 200);
  const auditor = { tenant: 'default', token: String(login.body.token) };
  t.is((await call(service, 'POST', '/spaces', { as: auditor, json: { name: 'ledger', schemas: ['x'] } })).status, 201);

  const answer = await call(service, 'GET', '/audit', { as: auditor });
  t.is(answer.status, 200);
  t.deepEqual(
    (answer.body.data as Array<{ action: string; actor: unknown; fields?: string[] }>).map(({ action, actor, fields }) => ({ action, actor, fields })),
    [
      { action: 'space.created', actor: { uid: (answer.body.data as Array<{ actor: { uid: string } }>)[0]?.actor.uid, username: 'auditor' }, fields: undefined },
      { action: 'account.updated', actor: { cli: true }, fields: ['password'] },
      { action: 'account.created', actor: { cli: true }, fields: ['password', 'role', 'username'] },
    ],
  );
  const rows = await Promise.all(['account_events', 'space_events'].map((table) => service.runtime.knex(table).select('*')));
  const places = {
    '/audit': JSON.stringify(answer.body),
    'the stored events': JSON.stringify(rows),
    'the service log': service.logText(),
    'the output of make user': [made.stdout, made.stderr, changed.stdout, changed.stderr].join('\n'),
  };
  t.true(places['the service log'].includes('/auth/login') && places['the service log'].includes('/audit'), 'the log tells of the requests');
  for (const [place, text] of Object.entries(places)) {
    for (const secret of secretsOf([firstHash, secondHash])) t.false(text.includes(secret), `${place} holds a secret`);
    t.false(/scrypt\$/.test(text), `${place} holds something shaped like a hash`);
  }
});
