import { randomBytes } from 'node:crypto';
import { saveAccount } from '../auth/accounts.ts';
import { signSystemToken } from '../auth/tokens.ts';
import type { Runtime } from '../core/runtime.ts';

/** The fields of an account to create; any other field is stored too (SPEC §5.1). */
export interface UserFields {
  username?: string;
  /** Plain text, stored hashed; a random one when left out. */
  password?: string;
  role?: 'admin' | 'member';
  /** The spaces the account may access; absent or empty = all. */
  spaces?: string[];
  /** The schemas the account may read; `["*"]` = all. */
  schemas?: string[];
  [field: string]: unknown;
}

/** An account of the service under test, with what a test needs to act as it. */
export interface TestUser {
  readonly uid: string;
  readonly username: string;
  /** The plain password, for a test of `POST /auth/login`. */
  readonly password: string;
  readonly role: 'admin' | 'member';
  readonly tenant: string;
  /** A system JWT for the account: `Authorization: Bearer <token>`, or `{ as: user }`. */
  readonly token: string;
}

let usersMade = 0;

/** Creates (or updates) an account in `tenant`, the way `make user` does, and signs a token for it. */
export async function createUser(runtime: Runtime, tenant: string, fields: UserFields = {}): Promise<TestUser> {
  const { username = `user${++usersMade}`, password = randomBytes(12).toString('base64url'), ...rest } = fields;
  const { account } = await saveAccount(runtime.tenantDatabase, tenant, { ...rest, username, password });
  const token = await signSystemToken(runtime, account, tenant);
  return Object.freeze({ uid: account.uid, username: account.username, password, role: account.role, tenant, token });
}
