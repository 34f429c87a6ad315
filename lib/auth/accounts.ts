import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { sql, statementOf, type SqlFragment } from '../db/statement.ts';
import type { TenantDatabase, TransactionStatement } from '../db/tenant-database.ts';
import { DOCUMENTS, DuplicateKeyError, newDocumentId, toStorableValue, type Document } from '../documents/index.ts';
import { tenantRows } from '../tenancy/scope.ts';
import { isStorableText } from '../values/storable-text.ts';
import { currentRequest } from '../core/request-state.ts';
import { insertAccountEvent, requestActor, type AccountActor, type AccountTarget, type ChangeOrigin } from './account-events.ts';
import { hashPassword } from './passwords.ts';

/** An account as the rest of the service sees it (SPEC §5.1): never the password hash. */
export interface Account {
  uid: string;
  username: string;
  role: 'admin' | 'member';
  spaces?: string[];
  schemas?: string[];
  [field: string]: unknown;
}

/** What `saveAccount` takes: `password` is plain text and is stored only as a hash. */
export interface AccountInput {
  username: string;
  password?: string;
  role?: 'admin' | 'member';
  spaces?: string[];
  schemas?: string[];
  [field: string]: unknown;
}

const ACCOUNTS = 'accounts';
const ROLES = new Set(['admin', 'member']);
const UNIQUE_VIOLATION = '23505';

/** Accounts are documents of `accounts` (SPEC §5.1), which handlers read with `db.collection('accounts')`. */
function accountRows(tenant: string, condition: SqlFragment): Knex.QueryBuilder {
  return tenantRows(DOCUMENTS, tenant, { sql: 'collection = ?', bindings: [ACCOUNTS] }, condition);
}

/**
 * The one account `condition` finds with `key`; text PostgreSQL could not hold names none. The
 * condition is an equality on a unique key (`_id` or the username), so one plan serves every key.
 */
async function findDocument(database: TenantDatabase, tenant: string, condition: string, key: string): Promise<Document | undefined> {
  if (typeof key !== 'string' || !isStorableText(key)) return undefined;
  const statement = statementOf(accountRows(tenant, { sql: condition, bindings: [key] }).select('doc').limit(1));
  const { rows } = await database.query<{ doc: Document }>(tenant, { ...statement, planOnce: true });
  return rows[0]?.doc;
}

/** The public view of a stored account document: `_id` becomes `uid`, the hash stays behind. */
export function accountFromDocument(document: Document): Account {
  const { _id, password: _hash, ...fields } = document;
  return { ...fields, uid: String(_id) } as Account;
}

/** The caller's account, read afresh on each request that needs it (spaces, audit). */
export async function findAccountByUid(database: TenantDatabase, tenant: string, uid: string): Promise<Account | undefined> {
  const document = await findDocument(database, tenant, 'id = ?', uid);
  return document ? accountFromDocument(document) : undefined;
}

export async function findAccountByUsername(database: TenantDatabase, tenant: string, username: string): Promise<Account | undefined> {
  const document = await findAccountDocument(database, tenant, username);
  return document ? accountFromDocument(document) : undefined;
}

/**
 * The stored document, hash included, for the login check only. On `account_username`, whose
 * unique index row-level security lets PostgreSQL use; the type check keeps 5 from naming "5".
 */
export async function findAccountDocument(database: TenantDatabase, tenant: string, username: string): Promise<Document | undefined> {
  if (typeof username !== 'string') throw new TypeError('username must be a string');
  return findDocument(database, tenant, "account_username = ? and jsonb_typeof(doc->'username') = 'string'", username);
}

/** What `saveAccount` takes besides the account. */
export interface SaveOptions {
  /** Who makes the change, as its event names it: by default the request's caller, null outside a request. */
  readonly actor?: AccountActor;
}

/**
 * Creates or updates the account named by `input.username` (fields left out keep their values).
 * The change and its event (`GET /audit`) share one transaction; an update changing nothing writes nothing.
 */
export async function saveAccount(database: TenantDatabase, tenant: string, input: AccountInput, options: SaveOptions = {}): Promise<{ account: Account; created: boolean }> {
  const fields = await storedFields(input, tenant);
  const request = currentRequest();
  const origin: ChangeOrigin = { actor: options.actor === undefined ? requestActor(request) : options.actor, request };
  for (let attempt = 0; ; attempt++) {
    try {
      return await database.transaction(tenant, (run) => saveInTransaction(run, tenant, fields, origin));
    } catch (error) {
      // A concurrent save created the same username first: update that one instead.
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
      if (attempt > 0) throw new DuplicateKeyError(`duplicate key: a document of "${ACCOUNTS}" with this username exists`);
    }
  }
}

async function saveInTransaction(run: TransactionStatement, tenant: string, fields: StoredFields, origin: ChangeOrigin): Promise<{ account: Account; created: boolean }> {
  const locking = accountRows(tenant, { sql: 'account_username = ?', bindings: [fields.username] }).select('doc').forUpdate();
  const [existing] = (await run(statementOf(locking))).rows as Array<{ doc: Document }>;
  if (existing !== undefined) {
    const changed = changedFields(existing.doc, fields);
    const document = { ...existing.doc, ...fields };
    if (changed.length > 0) {
      const writing = accountRows(tenant, { sql: 'id = ?', bindings: [document._id] }).update({ doc: JSON.stringify(document) });
      await run(statementOf(writing));
      await insertAccountEvent(run, tenant, targetOf(document), 'updated', changed, origin);
    }
    return { account: accountFromDocument(document), created: false };
  }
  if (fields.password === undefined) throw new TypeError('a new account needs a password');
  const document: Document = { _id: newDocumentId(), role: 'member', ...fields };
  await run(statementOf(sql(DOCUMENTS).insert({ tenant, collection: ACCOUNTS, id: document._id, doc: JSON.stringify(document) })));
  await insertAccountEvent(run, tenant, targetOf(document), 'created', Object.keys(document).filter((name) => name !== '_id'), origin);
  return { account: accountFromDocument(document), created: true };
}

/** The names of the fields `fields` changes; a password given counts as changed (each hash is salted anew). */
function changedFields(stored: Document, fields: StoredFields): string[] {
  return Object.keys(fields).filter((name) => name === 'password' || !isDeepStrictEqual(stored[name], fields[name]));
}

function targetOf(document: Document): AccountTarget {
  return { uid: String(document._id), username: String(document.username) };
}

/** The fields to store, as JSON: the password already hashed. */
type StoredFields = Record<string, unknown> & { readonly username: string };

async function storedFields(input: AccountInput, tenant: string): Promise<StoredFields> {
  validateAccountInput(input);
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (value !== undefined) fields[name] = value;
  }
  if (input.password !== undefined) fields.password = await hashPassword(input.password, { tenant, client: '' });
  // Checked as the document store checks a document: JSON it can hold, keys it allows.
  return toStorableValue({ ...fields, username: input.username }, 'account') as StoredFields;
}

function validateAccountInput(input: AccountInput): void {
  if (typeof input.username !== 'string' || input.username.length === 0) throw new TypeError('username must be a non-empty string');
  if (input.password !== undefined && (typeof input.password !== 'string' || input.password.length === 0)) {
    throw new TypeError('password must be a non-empty string');
  }
  if (input.role !== undefined && !ROLES.has(input.role)) throw new TypeError('role must be "admin" or "member"');
  for (const list of ['spaces', 'schemas'] as const) {
    const value = input[list];
    if (value !== undefined && !(Array.isArray(value) && value.every((item) => typeof item === 'string'))) {
      throw new TypeError(`${list} must be an array of strings`);
    }
  }
  for (const reserved of ['_id', 'uid']) {
    if (reserved in input) throw new TypeError(`${reserved} is assigned by the store and cannot be saved`);
  }
}
