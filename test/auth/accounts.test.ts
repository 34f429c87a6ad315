import test from 'ava';
import { findAccountByUid, findAccountByUsername, saveAccount } from '../../lib/auth/accounts.ts';
import { verifyPassword } from '../../lib/auth/passwords.ts';
import { DuplicateKeyError, documentStore } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme', 'globex']);
});
test.after.always(async () => {
  await database?.close();
});

async function storedDocument(tenant: string, username: string): Promise<Record<string, unknown>> {
  const [row] = await database.knex('documents').where({ tenant, collection: 'accounts' }).whereRaw("doc->>'username' = ?", [username]).select('doc');
  return (row as { doc: Record<string, unknown> }).doc;
}

test('a new account is stored with a salted scrypt hash, never the password', async (t) => {
  const { account, created } = await saveAccount(database.tenantDatabase, 'acme', { username: 'alice', password: 'wonderland', email: 'alice@example.com' });
  t.true(created);
  t.deepEqual(account, { uid: account.uid, username: 'alice', role: 'member', email: 'alice@example.com' });
  const stored = await storedDocument('acme', 'alice');
  t.is(stored._id, account.uid);
  t.regex(String(stored.password), /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{88}$/);
  t.false(JSON.stringify(stored).includes('wonderland'));
  t.true(await verifyPassword('wonderland', stored.password));
  t.false(await verifyPassword('Wonderland', stored.password));
});

test('the same password hashes differently for two accounts (salted)', async (t) => {
  await saveAccount(database.tenantDatabase, 'acme', { username: 'salt-1', password: 'same' });
  await saveAccount(database.tenantDatabase, 'acme', { username: 'salt-2', password: 'same' });
  t.not((await storedDocument('acme', 'salt-1')).password, (await storedDocument('acme', 'salt-2')).password);
});

test('lookups by uid and username leave the hash out', async (t) => {
  const { account } = await saveAccount(database.tenantDatabase, 'acme', { username: 'bob', password: 'builder', role: 'admin', spaces: ['ops'], schemas: ['*'] });
  const byName = await findAccountByUsername(database.tenantDatabase, 'acme', 'bob');
  t.deepEqual(byName, { uid: account.uid, username: 'bob', role: 'admin', spaces: ['ops'], schemas: ['*'] });
  t.deepEqual(await findAccountByUid(database.tenantDatabase, 'acme', account.uid), byName);
  t.false('password' in (byName ?? {}));
  t.is(await findAccountByUsername(database.tenantDatabase, 'acme', 'nobody'), undefined);
  t.is(await findAccountByUid(database.tenantDatabase, 'acme', 'no-such-uid'), undefined);
});

test('accounts belong to their tenant', async (t) => {
  const { account } = await saveAccount(database.tenantDatabase, 'acme', { username: 'carol', password: 'one' });
  t.is(await findAccountByUsername(database.tenantDatabase, 'globex', 'carol'), undefined);
  t.is(await findAccountByUid(database.tenantDatabase, 'globex', account.uid), undefined);
  const other = await saveAccount(database.tenantDatabase, 'globex', { username: 'carol', password: 'two' });
  t.true(other.created);
  t.not(other.account.uid, account.uid);
});

test('an update keeps the fields it leaves out and can clear a list', async (t) => {
  const first = await saveAccount(database.tenantDatabase, 'acme', { username: 'dave', password: 'first', role: 'admin', spaces: ['a', 'b'], schemas: ['x'], team: 'red' });
  const before = (await storedDocument('acme', 'dave')).password;
  const second = await saveAccount(database.tenantDatabase, 'acme', { username: 'dave', spaces: [] });
  t.false(second.created);
  t.is(second.account.uid, first.account.uid);
  t.deepEqual(await findAccountByUsername(database.tenantDatabase, 'acme', 'dave'), { uid: first.account.uid, username: 'dave', role: 'admin', spaces: [], schemas: ['x'], team: 'red' });
  t.is((await storedDocument('acme', 'dave')).password, before);
  await saveAccount(database.tenantDatabase, 'acme', { username: 'dave', password: 'second', role: 'member' });
  const after = await storedDocument('acme', 'dave');
  t.true(await verifyPassword('second', after.password));
  t.false(await verifyPassword('first', after.password));
  t.is(after.role, 'member');
});

test('concurrent saves of one new username make one account', async (t) => {
  const results = await Promise.all(Array.from({ length: 5 }, (_, index) => saveAccount(database.tenantDatabase, 'acme', { username: 'erin', password: `pw-${index}` })));
  t.is(results.filter((result) => result.created).length, 1);
  t.is(new Set(results.map((result) => result.account.uid)).size, 1);
  t.is(await documentStore(database.tenantDatabase, 'acme').collection('accounts').countDocuments({ username: 'erin' }), 1);
});

test('the store itself refuses a second account with the same username', async (t) => {
  const accounts = documentStore(database.tenantDatabase, 'acme').collection('accounts');
  await accounts.insertOne({ username: 'frank', password: 'x' });
  const error = await t.throwsAsync(accounts.insertOne({ username: 'frank', password: 'y' }), { instanceOf: DuplicateKeyError });
  t.regex(error.message, /username/);
  t.false(error.message.includes('frank'));
});

const INVALID: Array<[string, Record<string, unknown>, RegExp]> = [
  ['a missing username', { password: 'x' }, /username/],
  ['an empty password', { username: 'gina', password: '' }, /password/],
  ['a password that is not a string', { username: 'gina', password: 5 }, /password/],
  ['an unknown role', { username: 'gina', password: 'x', role: 'root' }, /role/],
  ['spaces that are not strings', { username: 'gina', password: 'x', spaces: [1] }, /spaces/],
  ['schemas that are not an array', { username: 'gina', password: 'x', schemas: 'all' }, /schemas/],
  ['a uid chosen by the caller', { username: 'gina', password: 'x', uid: 'mine' }, /uid/],
  ['a new account without a password', { username: 'gina' }, /needs a password/],
];

for (const [title, input, message] of INVALID) {
  test(`saveAccount refuses ${title}`, async (t) => {
    await t.throwsAsync(saveAccount(database.tenantDatabase, 'acme', input as never), { instanceOf: TypeError, message });
    t.is(await findAccountByUsername(database.tenantDatabase, 'acme', 'gina'), undefined);
  });
}
