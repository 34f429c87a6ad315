import { z } from 'zod';

/**
 * How hard and how long `make bench` pushes. The defaults are the SPEC §14 figures; the
 * environment can shrink them (a smoke test, a quick look during development).
 */
export interface BenchSettings {
  /** `NAME=value` of every BENCH_* variable off its default: the targets of issue 13 hold for the defaults. */
  readonly changed: readonly string[];
  /** Seconds each server is measured for, after its warm-up. */
  readonly seconds: number;
  /** Rounds of items 1 to 4, their servers measured in turn in each: each figure is a median. */
  readonly rounds: number;
  readonly warmupSeconds: number;
  /** Concurrent connections of the load generator: modest, the machine may have two cores. */
  readonly connections: number;
  /** Accounts seeded into the tenant for the getOneAccount measurement. */
  readonly accounts: number;
  /** Projects generated for the routing measurement, each with `routesPerProject` routes. */
  readonly projects: number;
  readonly routesPerProject: number;
  /** Requests sent between the two RSS readings. */
  readonly memoryRequests: number;
  /** Documents seeded into the tenant for item 7's find. */
  readonly documents: number;
  /** The items to measure (`BENCH_ITEMS=7`, `BENCH_ITEMS=3,7`): all by default. */
  readonly items: ReadonlySet<number>;
}

const ALL_ITEMS = '1,2,3,4,5,6,7,8,9';

const environmentSchema = z.object({
  BENCH_SECONDS: z.coerce.number().positive().max(120).default(5),
  BENCH_ROUNDS: z.coerce.number().int().min(1).max(9).default(3),
  BENCH_WARMUP_SECONDS: z.coerce.number().min(0).max(30).default(1),
  BENCH_CONNECTIONS: z.coerce.number().int().positive().max(1000).default(10),
  BENCH_ACCOUNTS: z.coerce.number().int().positive().default(100_000),
  BENCH_PROJECTS: z.coerce.number().int().min(2).max(5000).default(500),
  BENCH_ROUTES_PER_PROJECT: z.coerce.number().int().positive().max(200).default(20),
  BENCH_MEMORY_REQUESTS: z.coerce.number().int().min(2).default(100_000),
  BENCH_DOCUMENTS: z.coerce.number().int().positive().default(1_000_000),
  BENCH_ITEMS: z.string().regex(/^[1-9](,[1-9])*$/, 'a list of items such as 3,7').default(ALL_ITEMS),
});

/** Reads the BENCH_* variables; a bad value stops the run with the variable's name. */
export function benchSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`bench settings: ${problems.join('; ')}`);
  }
  const values = parsed.data;
  return Object.freeze({
    changed: changedFromDefaults(values),
    seconds: values.BENCH_SECONDS,
    rounds: values.BENCH_ROUNDS,
    warmupSeconds: values.BENCH_WARMUP_SECONDS,
    connections: values.BENCH_CONNECTIONS,
    accounts: values.BENCH_ACCOUNTS,
    projects: values.BENCH_PROJECTS,
    routesPerProject: values.BENCH_ROUTES_PER_PROJECT,
    memoryRequests: values.BENCH_MEMORY_REQUESTS,
    documents: values.BENCH_DOCUMENTS,
    items: new Set(values.BENCH_ITEMS.split(',').map(Number)),
  });
}

function changedFromDefaults(values: z.infer<typeof environmentSchema>): string[] {
  const defaults = environmentSchema.parse({});
  const names = Object.keys(defaults) as Array<keyof typeof defaults>;
  return names.filter((name) => values[name] !== defaults[name]).map((name) => `${name}=${values[name]}`);
}
