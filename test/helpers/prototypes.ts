import { randomBytes, scryptSync } from 'node:crypto';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { documentStore } from '../../lib/documents/index.ts';
import type { ServiceUnderTest } from './service.ts';

/**
 * What a request must never reach: the prototypes every plain object, array, function and string
 * inherits from, and `Object` itself. A snapshot keeps each one's own properties and their
 * descriptors, so that a property added, removed or replaced shows.
 */
const WATCHED = { 'Object.prototype': Object.prototype, 'Array.prototype': Array.prototype, 'Function.prototype': Function.prototype, 'String.prototype': String.prototype, Object } as const;

type WatchedName = keyof typeof WATCHED;
export type PrototypeSnapshot = ReadonlyMap<WatchedName, ReadonlyMap<PropertyKey, PropertyDescriptor>>;

export function snapshotPrototypes(): PrototypeSnapshot {
  return new Map(Object.entries(WATCHED).map(([name, target]) => [name as WatchedName, ownDescriptors(target)]));
}

function ownDescriptors(target: object): ReadonlyMap<PropertyKey, PropertyDescriptor> {
  return new Map(Reflect.ownKeys(target).map((key) => [key, Reflect.getOwnPropertyDescriptor(target, key) as PropertyDescriptor]));
}

/** Each own property added, removed or changed since `before`, as `Object.prototype.hasOwnProperty removed`. */
export function prototypeChanges(before: PrototypeSnapshot): string[] {
  const after = snapshotPrototypes();
  const changes: string[] = [];
  for (const [name, properties] of before) {
    const now = after.get(name) as ReadonlyMap<PropertyKey, PropertyDescriptor>;
    for (const [key, descriptor] of properties) {
      if (!now.has(key)) changes.push(`${name}.${String(key)} removed`);
      else if (!sameDescriptor(descriptor, now.get(key) as PropertyDescriptor)) changes.push(`${name}.${String(key)} changed`);
    }
    for (const key of now.keys()) if (!properties.has(key)) changes.push(`${name}.${String(key)} added`);
  }
  return changes;
}

function sameDescriptor(one: PropertyDescriptor, other: PropertyDescriptor): boolean {
  const fields = ['value', 'get', 'set', 'writable', 'enumerable', 'configurable'] as const;
  return fields.every((field) => Object.is(one[field], other[field]));
}

/** Puts every watched object back as it was, so that one failing case does not spoil the next. */
export function restorePrototypes(before: PrototypeSnapshot): void {
  for (const [name, properties] of before) {
    const target = WATCHED[name];
    for (const key of Reflect.ownKeys(target)) if (!properties.has(key)) Reflect.deleteProperty(target, key);
    for (const [key, descriptor] of properties) Reflect.defineProperty(target, key, descriptor);
  }
}

/** The first object inside `value` whose prototype is neither Object.prototype nor Array.prototype, as a path. */
export function nonStandardPrototype(value: unknown, where = 'result'): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const expected = Array.isArray(value) ? Array.prototype : Object.prototype;
  if (Object.getPrototypeOf(value) !== expected) return where;
  for (const [key, child] of Object.entries(value)) {
    const found = nonStandardPrototype(child, `${where}[${JSON.stringify(key)}]`);
    if (found !== undefined) return found;
  }
  return undefined;
}

export interface Login {
  readonly tenant: string;
  readonly username: string;
  readonly password: string;
}

/**
 * An admin account of `tenant`, saved as `make user` saves one, whose stored hash is then scrypt
 * at the lowest cost a stored hash may have (N = 1024): a login checked after every case takes
 * milliseconds instead of a tenth of a second, through the same code.
 */
export async function quickLogin(service: ServiceUnderTest, tenant: string): Promise<Login> {
  const login = { tenant, username: 'gina', password: `a password of ${tenant}` };
  await saveAccount(service.runtime.tenantDatabase, tenant, { username: login.username, password: login.password, role: 'admin' });
  const salt = randomBytes(16);
  const key = scryptSync(login.password.normalize('NFC'), salt, 64, { N: 1024, r: 8, p: 1 });
  const password = ['scrypt', 1024, 8, 1, salt.toString('base64'), key.toString('base64')].join('$');
  await documentStore(service.runtime.tenantDatabase, tenant).collection('accounts').updateOne({ username: login.username }, { $set: { password } });
  return login;
}

/**
 * What every tenant relies on, asked over HTTP: a login with the right password answers 200
 * and a token, one with a wrong password 401, and the token lists spaces (200). Each problem
 * is returned as a line; none means all is well.
 */
export async function loginProblems(service: ServiceUnderTest, { tenant, username, password }: Login): Promise<string[]> {
  const login = (given: string) => service.fetch('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', tenant }, body: JSON.stringify({ username, password: given }) });
  const [right, wrong] = [await login(password), await login(`${password}-wrong`)];
  const answer = (await right.json()) as { token?: unknown };
  await wrong.arrayBuffer();
  const problems: string[] = [];
  if (right.status !== 200 || typeof answer.token !== 'string') problems.push(`login with the right password answered ${right.status} ${JSON.stringify(answer)}`);
  if (wrong.status !== 401) problems.push(`login with a wrong password answered ${wrong.status}`);
  if (typeof answer.token !== 'string') return problems;
  const spaces = await service.fetch('/spaces', { headers: { tenant, authorization: `Bearer ${answer.token}` } });
  const listed = await spaces.text();
  if (spaces.status !== 200) problems.push(`GET /spaces answered ${spaces.status} ${listed}`);
  return problems;
}
