import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import createError from 'http-errors';
import { FairQueue } from './fair-queue.ts';

/** scrypt cost parameters (OWASP's minimum for scrypt: N=2^17 is stronger but 128 MB a call). */
const COST = { N: 16384, r: 8, p: 1 } as const;
const KEY_BYTES = 64;
const SALT_BYTES = 16;
const PREFIX = 'scrypt';

/**
 * scrypt takes a core for about 0.1 s on libuv's pool. Unbounded, a burst of logins takes every
 * pool thread (file reads and DNS share them) and leaves the event loop a fraction of a core. So
 * hashes run one per core beyond the event loop's, leaving a pool thread free; a few dozen wait,
 * and one beyond is refused at once with 503 rather than queued for seconds. Shared fairly: the
 * tenants whose hashes wait take turns, and a full queue makes room by refusing the newest hash
 * of the tenant, or else of the client address, that waits with the most, so neither one tenant's
 * burst from many addresses nor one address's burst over many tenants (each within its login
 * budget) leaves everyone else's logins refused (SPEC §17).
 */
const POOL_THREADS = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const CONCURRENT_HASHES = Math.max(1, Math.min(availableParallelism() - 1, POOL_THREADS - 1));
const QUEUED_HASHES = 16 * CONCURRENT_HASHES;
const hashing = new FairQueue({
  concurrency: CONCURRENT_HASHES,
  capacity: QUEUED_HASHES,
  refusal: () => createError(503, 'too many logins at once; try again shortly', { expose: true, headers: { 'Retry-After': '1' } }),
});

/** Whose hash it is: the tenant, and the client address as the rate limits group it. */
export interface HashingFor {
  readonly tenant: string;
  readonly client: string;
}

/** Hashes made outside a request (`make user`, tools) share these keys. */
const OUTSIDE_REQUESTS: HashingFor = { tenant: '', client: '' };

/** Throws the 503 a hash for `caller` would get now, when the queue has no place for it: so a login can fail before any other work. */
export function assertHashingCapacity(caller: HashingFor = OUTSIDE_REQUESTS): void {
  hashing.assertRoomFor([caller.tenant, caller.client]);
}

function derive(password: string, salt: Buffer, options: ScryptOptions, caller: HashingFor): Promise<Buffer> {
  return hashing.run([caller.tenant, caller.client], () => scryptKey(password, salt, options));
}

function scryptKey(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => {
      if (error) reject(error);
      else resolve(key);
    });
  });
}

/** A salted scrypt hash: `scrypt$N$r$p$<salt base64>$<key base64>`. */
export async function hashPassword(password: string, caller: HashingFor = OUTSIDE_REQUESTS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST, caller);
  return [PREFIX, COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

interface ParsedHash {
  salt: Buffer;
  key: Buffer;
  options: ScryptOptions;
}

/**
 * A stored hash this service could have written: accounts are documents a handler may write, and
 * costs taken from one unchecked could make a login fail, or run for seconds.
 */
function parseHash(stored: unknown): ParsedHash | undefined {
  if (typeof stored !== 'string') return undefined;
  const [prefix, N, r, p, salt, key] = stored.split('$');
  if (prefix !== PREFIX || salt === undefined || key === undefined) return undefined;
  const options = { N: Number(N), r: Number(r), p: Number(p) };
  const costsSane = isPowerOfTwo(options.N) && options.N >= 1024 && options.N <= 131_072 && inRange(options.r, 1, 16) && inRange(options.p, 1, 4);
  const parsed = { salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64'), options };
  return costsSane && parsed.salt.length >= 8 && inRange(parsed.key.length, 16, 128) ? parsed : undefined;
}

function isPowerOfTwo(value: number): boolean {
  return Number.isSafeInteger(value) && value > 0 && (value & (value - 1)) === 0;
}

function inRange(value: number, low: number, high: number): boolean {
  return Number.isInteger(value) && value >= low && value <= high;
}

/** Stands in for a missing account, so an unknown username costs the same scrypt as a known one. */
let decoyHash: Promise<string> | undefined;

/** Makes the decoy ahead of the first login, so that login is not slower for an unknown name. */
export function prepareDecoyHash(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return decoyHash;
}

/** With no stored hash it still runs a full scrypt against a decoy: the time does not tell if the user exists. */
export async function verifyPassword(password: string, stored: unknown, caller: HashingFor = OUTSIDE_REQUESTS): Promise<boolean> {
  const parsed = parseHash(stored);
  const target = parsed ?? parseHash(await prepareDecoyHash());
  if (target === undefined) return false;
  const key = await derive(password, target.salt, target.options, caller);
  return parsed !== undefined && key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
