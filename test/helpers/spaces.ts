import { randomBytes } from 'node:crypto';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { signSystemToken } from '../../lib/auth/tokens.ts';
import type { ServiceUnderTest } from './service.ts';

/** A tenant of its own, so a test can assert a whole space list without its neighbours' spaces. */
export async function newTenant(service: ServiceUnderTest): Promise<string> {
  const name = `t-${randomBytes(5).toString('hex')}`;
  await service.runtime.knex('tenants').insert({ name });
  return name;
}

export interface AccountFields {
  readonly username: string;
  readonly role?: 'admin' | 'member';
  readonly spaces?: string[];
  readonly schemas?: string[];
}

export interface Caller {
  readonly tenant: string;
  readonly uid: string;
  readonly token: string;
}

/** Saves an account (created or updated) and signs a system token for it in `tenant`. */
export async function callerWith(service: ServiceUnderTest, tenant: string, account: AccountFields): Promise<Caller> {
  const { account: saved } = await saveAccount(service.runtime.tenantDatabase, tenant, { password: 'pw-for-tests', ...account });
  const token = await signSystemToken(service.runtime, saved, tenant);
  return { tenant, uid: saved.uid, token };
}

export interface CallOptions {
  /** A caller's tenant and token; `tenant` alone sends the header without a token. */
  readonly as?: Caller | { readonly tenant: string; readonly token?: string };
  /** Sent as JSON. */
  readonly json?: unknown;
  /** Sent as it is, with `contentType`. */
  readonly raw?: string;
  readonly contentType?: string;
  /** Further request headers (`If-Match`...). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface CallResult {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** One HTTP call to the service; the body is parsed as JSON (every spaces answer is JSON). */
export async function call(service: ServiceUnderTest, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.as) headers.tenant = options.as.tenant;
  if (options.as?.token) headers.authorization = `Bearer ${options.as.token}`;
  let body: string | undefined = options.raw;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  }
  if (options.contentType) headers['content-type'] = options.contentType;
  const response = await service.fetch(path, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** The path of a space, its name percent-encoded. */
export const spacePath = (name: string): string => `/spaces/${encodeURIComponent(name)}`;

/** Names of the spaces a list answer shows, in order. */
export function listedNames(result: CallResult): string[] {
  return (result.body.data as Array<{ name: string }>).map((space) => space.name);
}

/** `{name: schemas}` of a list answer, to assert both visibility and filtering at once. */
export function listedSchemas(result: CallResult): Record<string, unknown> {
  return Object.fromEntries((result.body.data as Array<{ name: string; schemas: string[] }>).map((space) => [space.name, space.schemas]));
}
