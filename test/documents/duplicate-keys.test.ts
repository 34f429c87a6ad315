import test from 'ava';
import { DuplicateKeyError, documentStore } from '../../lib/documents/index.ts';
import { migratedDatabase } from '../helpers/database.ts';

const NAMES_THE_USERNAME = { instanceOf: DuplicateKeyError, message: 'duplicate key: a document of "accounts" with this username exists' };

/**
 * A username is unique per tenant through one index after the contract migration, and through
 * two between the expand migration that built the new one and the contract that drops the old:
 * whichever meets a duplicate first, the error names the username, never the index.
 */
test('a duplicate username names the username, met by the index of either side of the contract migration', async (t) => {
  const database = await migratedDatabase(['acme']);
  t.teardown(() => database.close());
  const accounts = documentStore(database.tenantDatabase, 'acme').collection('accounts');
  await accounts.insertOne({ _id: 'first', username: 'ada' });
  await t.throwsAsync(accounts.insertOne({ _id: 'second', username: 'ada' }), NAMES_THE_USERNAME);

  // The index the contract migration drops, alone: a database whose expand migration met it first.
  await database.knex.raw("create unique index documents_accounts_username on documents (tenant, account_username) where collection = 'accounts'");
  await database.knex.raw('drop index documents_username_per_tenant');
  const error = await t.throwsAsync(accounts.insertOne({ _id: 'third', username: 'ada' }), NAMES_THE_USERNAME);
  t.is(error?.code, 11000);
  t.is(await accounts.countDocuments({ username: 'ada' }), 1);
});
