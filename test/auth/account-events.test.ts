import test from 'ava';
import { saveAccount } from '../../lib/auth/accounts.ts';
import type { Runtime } from '../../lib/core/runtime.ts';
import { currentRequest } from '../../lib/core/request-state.ts';
import { runInTenant } from '../../lib/tenancy/scope.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

let database: MigratedDatabase;

test.before(async () => {
  database = await migratedDatabase(['acme', 'fragile-create', 'fragile-commit', 'globex']);
});
test.after.always(async () => {
  await database?.close();
});

async function eventsOf(tenant: string): Promise<Array<Record<string, unknown>>> {
  return database.knex('account_events').where({ tenant }).orderBy('id').select('account_username', 'action', 'fields', 'actor_uid', 'actor_username', 'actor_cli', 'request_id', 'request_id_from_caller');
}

async function storedAccounts(tenant: string): Promise<Array<Record<string, unknown>>> {
  return (await database.knex('documents').where({ tenant, collection: 'accounts' }).orderBy('id').select('doc')).map((row: { doc: Record<string, unknown> }) => row.doc);
}

test('each save writes one event: created with the fields set, updated with the fields changed, nothing for no change', async (t) => {
  const { account } = await saveAccount(database.tenantDatabase, 'acme', { username: 'ann', password: 'pw-1', email: 'ann@example.com' }, { actor: { cli: true } });
  await saveAccount(database.tenantDatabase, 'acme', { username: 'ann', email: 'ann@example.com' });
  await saveAccount(database.tenantDatabase, 'acme', { username: 'ann', email: 'ann@example.org', schemas: ['*'] });
  const common = { account_username: 'ann', actor_uid: null, actor_username: null, request_id: '', request_id_from_caller: null };
  t.deepEqual(await eventsOf('acme'), [
    { ...common, action: 'created', fields: ['email', 'password', 'role', 'username'], actor_cli: true },
    { ...common, action: 'updated', fields: ['email', 'schemas'], actor_cli: false },
  ]);
  t.is((await database.knex('account_events').where({ tenant: 'acme' }).first('account_uid')).account_uid, account.uid);
});

test("inside a request the event names the request's caller and its request id", async (t) => {
  const runtime = { tenantDatabase: database.tenantDatabase } as Runtime;
  await runInTenant(runtime, 'globex', async () => {
    const request = currentRequest();
    if (request === undefined) throw new Error('no request');
    Object.assign(request, { requestId: 'req-42', requestIdFrom: 'caller', caller: { uid: 'u-admin', claims: { username: 'boss' } } });
    await saveAccount(database.tenantDatabase, 'globex', { username: 'gus', password: 'pw-2' });
  });
  t.like((await eventsOf('globex'))[0], { account_username: 'gus', actor_uid: 'u-admin', actor_username: 'boss', actor_cli: false, request_id: 'req-42', request_id_from_caller: true });
});

/**
 * A fault in the event's insert or at the commit after it, for one tenant only (a trigger): the
 * account change must be rolled back with it.
 */
for (const when of ['insert', 'commit'] as const) {
  test(`a fault at the event's ${when} rolls the account change back: no change without its event`, async (t) => {
    const tenant = `fragile-${when === 'insert' ? 'create' : 'commit'}`;
    await saveAccount(database.tenantDatabase, tenant, { username: 'fay', password: 'pw-3', role: 'member' });
    const accountsBefore = await storedAccounts(tenant);
    const fn = `fail_account_${when}`;
    await database.knex.raw(`create function ${fn}() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`);
    const trigger =
      when === 'insert'
        ? `create trigger ${fn} before insert on account_events for each row when (new.tenant = '${tenant}') execute function ${fn}()`
        : `create constraint trigger ${fn} after insert on account_events deferrable initially deferred for each row when (new.tenant = '${tenant}') execute function ${fn}()`;
    await database.knex.raw(trigger);
    t.teardown(async () => {
      await database.knex.raw(`drop trigger ${fn} on account_events`);
      await database.knex.raw(`drop function ${fn}()`);
    });
    await t.throwsAsync(saveAccount(database.tenantDatabase, tenant, { username: 'fay', role: 'admin' }), { message: /injected fault/ });
    await t.throwsAsync(saveAccount(database.tenantDatabase, tenant, { username: 'new', password: 'pw-4' }), { message: /injected fault/ });
    t.deepEqual(await storedAccounts(tenant), accountsBefore, 'no account changed or added');
    t.deepEqual((await eventsOf(tenant)).map((event) => event.action), ['created']);
  });
}

test('account events are tenant data: the service role cannot change or remove them', async (t) => {
  await saveAccount(database.tenantDatabase, 'acme', { username: 'kept', password: 'pw-5' });
  for (const sql of ["update account_events set fields = '{}'", 'delete from account_events']) {
    const refused = await t.throwsAsync(database.tenantDatabase.query('acme', { sql, bindings: [] }));
    t.regex(refused?.message ?? '', /permission denied/, sql);
  }
  const forged = { sql: "insert into account_events (tenant, account_uid, account_username, action, at, fields) values ('globex', 'x', 'x', 'created', now(), '{}')", bindings: [] };
  t.regex((await t.throwsAsync(database.tenantDatabase.query('acme', forged)))?.message ?? '', /row-level security/);
});
