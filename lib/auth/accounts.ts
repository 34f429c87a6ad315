import { DuplicateKeyError, documentStore, type Document } from '../documents/index.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
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

export const ACCOUNTS = 'accounts';
const ROLES = new Set(['admin', 'member']);

function accounts(database: TenantDatabase, tenant: string) {
  return documentStore(database, tenant).collection(ACCOUNTS);
}

/** The public view of a stored account document: `_id` becomes `uid`, the hash stays behind. */
export function accountFromDocument(document: Document): Account {
  const { _id, password: _hash, ...fields } = document;
  return { ...fields, uid: String(_id) } as Account;
}

export async function findAccountByUid(database: TenantDatabase, tenant: string, uid: string): Promise<Account | undefined> {
  const document = await accounts(database, tenant).findOne({ _id: { $eq: uid } });
  return document ? accountFromDocument(document) : undefined;
}

export async function findAccountByUsername(database: TenantDatabase, tenant: string, username: string): Promise<Account | undefined> {
  const document = await findAccountDocument(database, tenant, username);
  return document ? accountFromDocument(document) : undefined;
}

/** The stored document, password hash included: for the login check only. */
export async function findAccountDocument(database: TenantDatabase, tenant: string, username: string): Promise<Document | undefined> {
  if (typeof username !== 'string') throw new TypeError('username must be a string');
  return (await accounts(database, tenant).findOne({ username: { $eq: username } })) ?? undefined;
}

/**
 * Creates the account named by `input.username`, or updates it: fields left out keep their
 * values. The password is hashed (scrypt, salted) before it is stored.
 */
export async function saveAccount(database: TenantDatabase, tenant: string, input: AccountInput): Promise<{ account: Account; created: boolean }> {
  const fields = await storedFields(input);
  const collection = accounts(database, tenant);
  for (let attempt = 0; ; attempt++) {
    const existing = await collection.findOne({ username: { $eq: input.username } });
    if (existing) {
      await collection.updateOne({ _id: { $eq: existing._id } }, { $set: fields });
      return { account: accountFromDocument({ ...existing, ...fields }), created: false };
    }
    if (fields.password === undefined) throw new TypeError('a new account needs a password');
    try {
      const document = { role: 'member', ...fields };
      const { insertedId } = await collection.insertOne(document);
      return { account: accountFromDocument({ ...document, _id: insertedId }), created: true };
    } catch (error) {
      // A concurrent save created the same username first: update that one instead.
      if (!(error instanceof DuplicateKeyError) || attempt > 0) throw error;
    }
  }
}

async function storedFields(input: AccountInput): Promise<Record<string, unknown>> {
  validateAccountInput(input);
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (value !== undefined) fields[name] = value;
  }
  if (input.password !== undefined) fields.password = await hashPassword(input.password);
  return fields;
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
