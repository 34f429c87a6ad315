import test from 'ava';
import { readdirSync } from 'node:fs';
import jwt from 'jsonwebtoken';
import { MIGRATIONS_DIR, migrateLatest } from '../../lib/db/migrations.ts';
import { cli, make, type CommandOutcome } from '../helpers/cli.ts';
import { createFreshDatabase, testKnex } from '../helpers/database.ts';
import { TEST_JWT_SECRET } from '../helpers/service.ts';
import type { Knex } from 'knex';
import { verifyPassword } from '../../lib/auth/passwords.ts';

/** A quote and make's `$` survive the trip from make's command line. */
const PASSWORD = "it's a $ecret $$ -x";

let databaseUrl: string;
let dropDatabase: () => Promise<void>;
let knex: Knex;

test.before(async () => {
  ({ url: databaseUrl, drop: dropDatabase } = await createFreshDatabase());
  knex = testKnex(databaseUrl);
  await migrateLatest(knex);
});
test.after.always(async () => {
  await knex?.destroy();
  await dropDatabase?.();
});

async function accountDocument(tenant: string, username: string): Promise<Record<string, unknown> | undefined> {
  const row = await knex('documents').where({ tenant, collection: 'accounts' }).whereRaw("doc->>'username' = ?", [username]).first('doc');
  return (row as { doc: Record<string, unknown> } | undefined)?.doc;
}

/**
 * A failure is one line on stderr, nothing on stdout, and a non-zero exit. Make adds its own
 * standard `make: *** [target] Error 1` trailer after the command's line.
 */
function assertFailure(t: { is: (a: unknown, b: unknown) => void; regex: (a: string, b: RegExp) => void }, outcome: CommandOutcome, message: RegExp): void {
  t.is(outcome.code !== 0, true);
  t.is(outcome.stdout, '');
  const lines = outcome.stderr.trimEnd().split('\n').filter((line) => !line.startsWith('make: ***'));
  t.is(lines.length, 1);
  t.regex(lines[0] ?? '', message);
}

test.serial('make tenant creates a tenant and is idempotent', async (t) => {
  const first = await make(['tenant', 'NAME=acme'], databaseUrl);
  t.is(first.code, 0, first.stderr);
  t.is(first.stdout, 'created tenant acme\n');
  const second = await make(['tenant', 'NAME=acme'], databaseUrl);
  t.is(second.stdout, 'tenant acme already exists\n');
  t.is((await knex('tenants').where({ name: 'acme' })).length, 1);
});

test.serial('tenant refuses a missing or invalid name', async (t) => {
  const [missing, invalid] = await Promise.all([make(['tenant'], databaseUrl), cli(['tenant', 'bad name!'], databaseUrl)]);
  assertFailure(t, missing, /^tenant: usage: make tenant NAME=<tenant>$/);
  assertFailure(t, invalid, /is not a valid tenant name/);
});

test.serial('make user creates an account with role, spaces and schemas, hashing the password', async (t) => {
  const outcome = await make(['user', 'TENANT=acme', 'USERNAME=alice', `PASSWORD=${PASSWORD}`, 'ROLE=admin', 'SPACES=ops, sales', 'SCHEMAS=x,y'], databaseUrl);
  t.is(outcome.code, 0, outcome.stderr);
  t.regex(outcome.stdout, /^created account alice \(uid [0-9a-f]{24}, role admin\) in tenant acme\n$/);
  const document = await accountDocument('acme', 'alice');
  t.like(document, { username: 'alice', role: 'admin', spaces: ['ops', 'sales'], schemas: ['x', 'y'] });
  t.regex(String(document?.password), /^scrypt\$/);
  t.true(await verifyPassword(PASSWORD, document?.password), 'the password arrives exactly as typed');
  t.false(outcome.stdout.includes(PASSWORD) || outcome.stderr.includes(PASSWORD));
});

test.serial('make user updates: omitted fields keep their values, SPACES= given empty clears the list', async (t) => {
  const before = await accountDocument('acme', 'alice');
  const outcome = await make(['user', 'TENANT=acme', 'USERNAME=alice', 'SPACES='], databaseUrl);
  t.is(outcome.code, 0, outcome.stderr);
  t.regex(outcome.stdout, /^updated account alice/);
  const after = await accountDocument('acme', 'alice');
  t.deepEqual(after, { ...before, spaces: [] });
  const roleOnly = await cli(['user', '--tenant', 'acme', '--username', 'alice', '--role', 'member'], databaseUrl);
  t.is(roleOnly.code, 0, roleOnly.stderr);
  t.deepEqual(await accountDocument('acme', 'alice'), { ...before, spaces: [], role: 'member' });
});

test.serial('user fails in one line for a missing argument, an unknown tenant or a bad role', async (t) => {
  const cases: Array<[Promise<CommandOutcome>, RegExp]> = [
    [make(['user', 'USERNAME=bob', 'PASSWORD=pw'], databaseUrl), /^user: TENANT is required; usage: make user TENANT=/],
    [make(['user', 'TENANT=acme', 'PASSWORD=pw'], databaseUrl), /USERNAME is required/],
    [make(['user', 'TENANT=nowhere', 'USERNAME=bob', 'PASSWORD=pw'], databaseUrl), /unknown tenant "nowhere" \(create it with make tenant NAME=nowhere\)/],
    [make(['user', 'TENANT=acme', 'USERNAME=bob'], databaseUrl), /a new account needs a password/],
    [make(['user', 'TENANT=acme', 'USERNAME=bob', 'PASSWORD=pw', 'ROLE=root'], databaseUrl), /ROLE must be admin or member/],
    [cli(['user', '--tenant', 'acme', '--bogus', 'x'], databaseUrl), /Unknown option '--bogus'/],
    [make(['user', 'TENANT=bad!', 'USERNAME=bob', 'PASSWORD=pw'], databaseUrl), /^user: "bad!" is not a valid tenant name/],
    [make(['token', 'TENANT=bad!', 'USERNAME=bob'], databaseUrl), /^token: "bad!" is not a valid tenant name/],
  ];
  for (const [outcome, message] of cases) assertFailure(t, await outcome, message);
  t.is(await accountDocument('acme', 'bob'), undefined);
});

test.serial('make token prints a system JWT for the account', async (t) => {
  const outcome = await make(['token', 'TENANT=acme', 'USERNAME=alice'], databaseUrl);
  t.is(outcome.code, 0, outcome.stderr);
  const token = outcome.stdout.trim();
  const claims = jwt.verify(token, TEST_JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
  const document = await accountDocument('acme', 'alice');
  t.like(claims, { uid: document?._id, tenant: 'acme', username: 'alice', role: 'member' });
});

test.serial('token fails in one line for an unknown account, an unknown tenant or a missing argument', async (t) => {
  const cases: Array<[Promise<CommandOutcome>, RegExp]> = [
    [make(['token', 'TENANT=acme', 'USERNAME=nobody'], databaseUrl), /^token: no account "nobody" in tenant acme$/],
    [make(['token', 'TENANT=nowhere', 'USERNAME=alice'], databaseUrl), /unknown tenant "nowhere"/],
    [make(['token', 'TENANT=acme'], databaseUrl), /USERNAME is required/],
  ];
  for (const [outcome, message] of cases) assertFailure(t, await outcome, message);
});

test.serial('the migration targets say first which database they worked on, never its password', async (t) => {
  const url = new URL(databaseUrl);
  url.password = 'hunter2-secret';
  const database = `database: ${url.hostname}:${url.port || '5432'}${url.pathname}`;
  const [status, migrate] = [await make(['migrate-status'], url.href), await make(['migrate'], url.href)];
  t.is(status.code, 0, status.stderr);
  t.is(status.stdout.split('\n')[0], database);
  t.regex(status.stdout.split('\n')[1] ?? '', /^applied +expand +20261122000001_tenants\.ts/);
  t.is(migrate.stdout, `${database}\nalready up to date\n`);
  t.false([status, migrate].some((outcome) => `${outcome.stdout}${outcome.stderr}`.includes('hunter2')));
});

test('migration refuses a missing or invalid NAME in one line and writes nothing', async (t) => {
  const before = readdirSync(MIGRATIONS_DIR);
  const cases: Array<[Promise<CommandOutcome>, RegExp]> = [
    [make(['migration'], databaseUrl), /^migration: usage: make migration NAME=<name> \[KIND=expand\|contract\]$/],
    [make(['migration', 'NAME='], databaseUrl), /^migration: usage: make migration NAME=<name> \[KIND=expand\|contract\]$/],
    [make(['migration', 'NAME=Bad Name'], databaseUrl), /^migration: migration name "Bad Name" must be lower-case letters, digits, _ or -$/],
    [make(['migration', 'NAME=../escape'], databaseUrl), /must be lower-case letters, digits, _ or -$/],
    // The name reaches the command as typed: no shell runs what it holds.
    [make(['migration', 'NAME=x`echo y`'], databaseUrl), /^migration: migration name "x`echo y`" must be lower-case letters, digits, _ or -$/],
    [make(['migration', 'NAME=x$$(echo y)'], databaseUrl), /^migration: migration name "x\$\$\(echo y\)" must be lower-case letters, digits, _ or -$/],
    [make(['migration', 'NAME=a"b'], databaseUrl), /^migration: migration name "a"b" must be lower-case letters, digits, _ or -$/],
    [make(['migration', 'NAME=x', 'KIND=`echo contract`'], databaseUrl), /^migration: KIND must be expand or contract, not "`echo contract`"$/],
  ];
  for (const [outcome, message] of cases) assertFailure(t, await outcome, message);
  t.deepEqual(readdirSync(MIGRATIONS_DIR), before);
});
