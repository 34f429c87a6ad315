import { z } from 'zod';

const rateWindow = z.strictObject({
  windowMs: z.number().int().positive(),
  max: z.number().int().positive(),
});

/** A section of the file: every key has a default, so an absent section is an empty one. */
const section = <Shape extends z.ZodRawShape>(shape: Shape) => z.strictObject(shape).prefault({} as never);

const tenantName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, 'must be a valid tenant name');

/** The expert configuration file (SPEC §3): every key optional, unknown keys rejected. */
export const expertSchema = z.strictObject({
  spaces: section({ enabled: z.boolean().default(false) }),
  tenancy: section({ defaultTenant: tenantName.nullable().default('default') }),
  referer: section({
    enabled: z.boolean().default(false),
    allow: z.array(z.string().min(1)).default([]),
    allowMissing: z.boolean().default(true),
  }),
  projects: section({
    default: z.string().min(1).optional(),
    onError: z.enum(['fail', 'skip']).default('fail'),
  }),
  rateLimit: section({
    public: rateWindow.default({ windowMs: 60_000, max: 600 }),
    login: rateWindow.default({ windowMs: 60_000, max: 20 }),
  }),
  http: section({ trustProxy: z.boolean().default(false) }),
  auth: section({
    tokenTtl: z.union([z.string().regex(/^\d+(ms|s|m|h|d)?$/, 'must be a duration such as "12h"'), z.number().int().positive()]).default('12h'),
  }),
  sso: section({
    authUrl: z.url().optional(),
    timeoutMs: z.number().int().positive().default(5000),
  }),
  limits: section({
    jsonBytes: z.number().int().positive().default(1_048_576),
    fileBytes: z.number().int().positive().default(10_485_760),
    files: z.number().int().positive().default(10),
    handlerMs: z.number().int().positive().default(30_000),
  }),
  sample: section({
    apiKey: z.string().min(1).optional(),
    uploadDir: z.string().min(1).default('./.data/uploads'),
  }),
});

export type ExpertConfig = z.output<typeof expertSchema>;
export type ExpertInput = z.input<typeof expertSchema>;

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** The environment variables of SPEC §2.3. */
export const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  JWT_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  EXPERT_CONFIG: z.string().min(1).optional(),
  PROJECTS_DIR: z.string().min(1).default('./projects'),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL').optional(),
  LOG_LEVEL: logLevel.default('info'),
  SAMPLE_API_KEY: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
});

export type Environment = z.output<typeof environmentSchema>;
