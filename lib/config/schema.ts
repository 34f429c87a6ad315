import { z } from 'zod';
import { postgresAddress } from '../values/postgres-url.ts';
import { TENANT_NAME } from '../values/tenant-name.ts';
import { durationSeconds } from './duration.ts';
import { parseOriginEntry } from './origins.ts';

/** A section of the file: every key has a default, so an absent section is an empty one. */
const section = <Shape extends z.ZodRawShape>(shape: Shape) => z.strictObject(shape).prefault({} as never);

/** setTimeout's longest delay (2^31-1 ms, a longer one fires at once), and PostgreSQL's: its timeouts are int milliseconds. */
export const LONGEST_TIMEOUT_MS = 2_147_483_647;

/** How much longer than `limits.handlerMs` PostgreSQL lets one of the service's transactions sit idle. */
export const IDLE_IN_TRANSACTION_MARGIN_MS = 5000;

/** A duration in milliseconds, bounded by what its use can honour, so that a value out of range stops start-up naming its key. */
const milliseconds = (min: number, max: number, fallback: number) => {
  const message = `must be a whole number of milliseconds from ${min} to ${max}`;
  return z.number({ error: message }).int(message).min(min, message).max(max, message).default(fallback);
};

/** A rate limit; a key left out keeps its default, so `{"max": 5}` alone keeps the window. */
const rateWindow = (defaults: { windowMs: number; max: number }) =>
  section({
    windowMs: milliseconds(1, LONGEST_TIMEOUT_MS, defaults.windowMs),
    max: z.number().int().positive().default(defaults.max),
  });

/** As ioredis reads it: a URL it cannot read would fail every request, not start-up. The message never repeats the value (a password). */
function opensAsRedisUrl(value: string): boolean {
  if (!/^rediss?:\/\//i.test(value) || !URL.canParse(value)) return false;
  const { username, password, pathname } = new URL(value);
  // The path names the database, by number.
  if (!/^\/?\d*$/.test(pathname)) return false;
  try {
    decodeURIComponent(username);
    decodeURIComponent(password);
    return true;
  } catch {
    return false;
  }
}

/** A seed node of a Redis Cluster: a Redis URL without a database (a cluster has database 0 only). */
function opensAsClusterNode(value: string): boolean {
  return opensAsRedisUrl(value) && /^\/?$/.test(new URL(value).pathname);
}

/** As `lib/projects/referer.ts` compares it; a URL would never match, so it is refused here rather than every request later. */
const HOST_ENTRY = /^(?:(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** A header name (RFC 9110 token), as `Access-Control-Expose-Headers` lists them. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** CORS (off unless configured): which browser origins may call project routes and /spaces. */
const cors = z
  .strictObject({
    origins: z
      .array(
        z
          .string()
          .refine(
            (entry) => parseOriginEntry(entry) !== undefined,
            'must be an origin such as "https://app.example.com" or "http://localhost:8080", or a pattern such as "https://*.example.com" or "*.example.com" (never "*")',
          ),
      )
      .min(1, 'must list at least one origin'),
    credentials: z.boolean().default(false),
    maxAge: z.number().int().nonnegative().optional(),
    exposeHeaders: z.array(z.string().regex(HEADER_NAME, 'must be a header name')).default([]),
  })
  .optional();

/** Where the service keeps its files unless DATA_DIR says otherwise, from the working directory. */
export const DEFAULT_DATA_DIR = './.data';

const tenantName = z.string().regex(TENANT_NAME, 'must be a valid tenant name');

/**
 * The built-in sections of the expert configuration file (SPEC §3): every key optional, unknown
 * keys rejected. Other top-level keys are projects' settings, checked when projects load.
 */
export const expertSchema = z.strictObject({
  spaces: section({
    enabled: z.boolean().default(false),
    // Days a deleted space stays restorable; 0 deletes at once.
    trashDays: z.number().int().min(0).max(36_500).default(30),
    // How often each instance purges the spaces past their days.
    purgeIntervalMs: milliseconds(1000, 86_400_000, 3_600_000),
  }),
  tenancy: section({ defaultTenant: tenantName.nullable().default('default') }),
  referer: section({
    enabled: z.boolean().default(false),
    allow: z.array(z.string().regex(HOST_ENTRY, 'must be a host such as "example.com", "*.example.com" or "localhost:8080", not a URL')).default([]),
    allowMissing: z.boolean().default(true),
  }),
  projects: section({
    default: z.string().min(1).optional(),
    onError: z.enum(['fail', 'skip']).default('fail'),
  }),
  rateLimit: section({
    public: rateWindow({ windowMs: 60_000, max: 600 }),
    login: rateWindow({ windowMs: 60_000, max: 20 }),
    // The IPv6 network one client holds, for every per-address limit: below /32 a budget would
    // span whole providers; 128 counts each address alone.
    ipv6Prefix: z.number().int().min(32).max(128).default(64),
  }),
  http: section({
    trustProxy: z.boolean().default(false),
    // Inside the 10 s a stop may take, so that the drain keeps at least 5 s.
    unreadyBeforeCloseMs: milliseconds(0, 5000, 0),
  }),
  cors,
  auth: section({
    tokenTtl: z
      .union([z.string(), z.number()])
      .refine((value) => durationSeconds(value) !== undefined, 'must be a whole number of seconds (at least 1) or a duration such as "90s", "15m", "12h", "7d"; at most 36500 days')
      .default('12h'),
  }),
  sso: section({
    authUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    timeoutMs: milliseconds(1, LONGEST_TIMEOUT_MS, 5000),
  }),
  limits: section({
    jsonBytes: z.number().int().positive().default(1_048_576),
    fileBytes: z.number().int().positive().default(10_485_760),
    /** How long an answer may go with none of it taken by the kernel (its client not reading) before its connection is closed. */
    answerStallMs: milliseconds(1000, 3_600_000, 120_000),
    /** What one database statement's rows may come to (PostgreSQL's bytes); more, and it is stopped. */
    resultBytes: z.number({ error: 'must be a whole number of bytes from 1024 to 1073741824' }).int('must be a whole number of bytes from 1024 to 1073741824').min(1024, 'must be a whole number of bytes from 1024 to 1073741824').max(1_073_741_824, 'must be a whole number of bytes from 1024 to 1073741824').default(67_108_864),
    files: z.number().int().positive().default(10),
    // A timer's delay, and with the margin added PostgreSQL's idle_in_transaction_session_timeout.
    handlerMs: milliseconds(1, LONGEST_TIMEOUT_MS - IDLE_IN_TRANSACTION_MARGIN_MS, 30_000),
    /** At most this many of an instance's database connections per tenant at once; default half the pool (SPEC §17.2). */
    tenantConnections: z.number({ error: 'must be a whole number of connections, at least 1' }).int('must be a whole number of connections, at least 1').min(1, 'must be a whole number of connections, at least 1').optional(),
    /** How long a tenant's statement over its share waits for a connection before that tenant gets 503. */
    queueMs: milliseconds(1, 60_000, 2000),
  }),
});

/** The built-in sections; any other top-level key holds a project's settings (SPEC §8.7). */
export const BUILT_IN_SECTIONS: ReadonlySet<string> = new Set(Object.keys(expertSchema.shape));

export type ExpertConfig = z.output<typeof expertSchema>;
/** The expert file as written: the built-in sections, and a section per project with settings. */
export type ExpertInput = z.input<typeof expertSchema> & { readonly [project: string]: unknown };

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** A URL pg cannot read stopped start-up with only "Invalid URL". The message never repeats the value (a password). */
function opensAsPostgresUrl(value: string): boolean {
  const address = postgresAddress(value);
  if (address === undefined) return false;
  return address.port === '' || (/^\d{1,5}$/.test(address.port) && Number(address.port) >= 1 && Number(address.port) <= 65_535);
}

const postgresUrl = z.string().refine(opensAsPostgresUrl, 'must be a postgres:// URL that pg can read, its port (if any) from 1 to 65535');

/** Digits (as many as `digits` allows) naming a whole number from `min` to `max`. */
const wholeNumberText = (digits: RegExp, min: number, max: number, message: string) =>
  z.string().regex(digits, message).transform(Number).refine((value) => value >= min && value <= max, message);

/** The environment variables of SPEC §2.3. */

export const environmentSchema = z.object({
  PORT: wholeNumberText(/^\d{1,5}$/, 0, 65_535, 'must be a port number from 0 to 65535').default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_DIRECT_URL: postgresUrl.optional(),
  DATABASE_POOL_MAX: wholeNumberText(/^\d{1,4}$/, 1, 1000, 'must be a whole number from 1 to 1000').default(10),
  DATABASE_PREPARED_STATEMENTS: z.enum(['true', 'false'], { message: 'must be true or false' }).default('true').transform((value) => value === 'true'),
  // Longer than 1.5 s where the database is far or the machine busy (issue 37).
  DATABASE_CONNECT_TIMEOUT_MS: wholeNumberText(/^\d{3,6}$/, 100, 600_000, 'must be a whole number of milliseconds from 100 to 600000').default(1500),
  JWT_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  EXPERT_CONFIG: z.string().min(1).optional(),
  PROJECTS_DIR: z.string().min(1).optional(),
  REDIS_URL: z.string().refine(opensAsRedisUrl, 'must be a redis:// or rediss:// URL with a valid port, a percent-encoded user and password, and a database number if any').optional(),
  REDIS_CLUSTER_NODES: z
    .string()
    .transform((value) => value.split(',').map((node) => node.trim()).filter((node) => node !== ''))
    .refine((nodes) => nodes.length > 0 && nodes.every(opensAsClusterNode), 'must be a comma-separated list of redis:// or rediss:// URLs of cluster nodes (host and port, a percent-encoded user and password, no database number)')
    .optional(),
  LOG_LEVEL: logLevel.default('info'),
  // Node reads a header as Latin-1 and refuses control characters in it: a token outside printable ASCII could never be sent.
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').regex(/^[\x21-\x7e]+$/, 'must hold no space and only printable ASCII (a bearer token is one word of a header)').optional(),
  DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
});

export type Environment = z.output<typeof environmentSchema>;
