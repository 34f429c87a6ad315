import test from 'ava';
import { statSync, writeFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, durationSeconds, IDLE_IN_TRANSACTION_MARGIN_MS, loadConfig, LONGEST_TIMEOUT_MS } from '../../lib/config/index.ts';
import { scratchFolder } from '../helpers/scratch.ts';

const scratch = () => scratchFolder('config');
const baseEnv = () => ({ JWT_SECRET: 'a-secret-that-is-long-enough', DATA_DIR: scratch() });

test('defaults apply when the expert file is absent', (t) => {
  const { config } = loadConfig({ env: { ...baseEnv(), EXPERT_CONFIG: undefined } });
  t.is(config.port, 3000);
  t.is(config.host, '127.0.0.1');
  t.false(config.spaces.enabled);
  t.is(config.spaces.trashDays, 30);
  t.is(config.spaces.purgeIntervalMs, 3_600_000);
  t.is(config.tenancy.defaultTenant, 'default');
  t.deepEqual(config.rateLimit.public, { windowMs: 60000, max: 600 });
  t.deepEqual(config.rateLimit.login, { windowMs: 60000, max: 20 });
  t.is(config.rateLimit.ipv6Prefix, 64);
  t.is(config.projects.onError, 'fail');
  t.is(config.limits.jsonBytes, 1048576);
  t.is(config.limits.handlerMs, 30000);
  t.is(config.sso.timeoutMs, 5000);
  t.is(config.auth.tokenTtl, '12h');
  t.true(config.database.embedded);
});

test('the expert file is read from EXPERT_CONFIG and merged with defaults', (t) => {
  const file = path.join(scratch(), 'expert.json');
  writeFileSync(file, JSON.stringify({ spaces: { enabled: true }, referer: { enabled: true, allow: ['*.example.com'] } }));
  const { config } = loadConfig({ env: { ...baseEnv(), EXPERT_CONFIG: file } });
  t.true(config.spaces.enabled);
  t.deepEqual(config.referer, { enabled: true, allow: ['*.example.com'], allowMissing: true });
});

test('the resolved configuration is deeply frozen', (t) => {
  const { config } = loadConfig({ env: baseEnv(), expert: {} });
  t.true(Object.isFrozen(config));
  t.true(Object.isFrozen(config.rateLimit.public));
  t.true(Object.isFrozen(config.referer.allow));
  t.throws(() => {
    (config.spaces as { enabled: boolean }).enabled = true;
  }, { instanceOf: TypeError });
});

test('secrets stay out of the configuration object', (t) => {
  const env = { ...baseEnv(), DATABASE_URL: 'postgres://user:hunter2@db.example/app' };
  const { config, secrets } = loadConfig({ env, expert: {} });
  const text = JSON.stringify(config);
  t.false(text.includes('hunter2'));
  t.false(text.includes(env.JWT_SECRET));
  t.is(secrets.jwtSecret, env.JWT_SECRET);
  t.false(config.database.embedded);
});

const invalid: Array<[string, unknown, RegExp]> = [
  ['a wrong type', { spaces: { enabled: 'yes' } }, /spaces\.enabled: /],
  ['an unknown key', { spaces: { enabeld: true } }, /spaces\.enabeld: unknown key/],
  ['negative trash days', { spaces: { trashDays: -1 } }, /spaces\.trashDays: /],
  ['fractional trash days', { spaces: { trashDays: 1.5 } }, /spaces\.trashDays: /],
  ['a purge interval under a second', { spaces: { purgeIntervalMs: 10 } }, /spaces\.purgeIntervalMs: /],
  ['an invalid enum', { projects: { onError: 'ignore' } }, /projects\.onError: /],
  ['a negative limit', { limits: { fileBytes: -1 } }, /limits\.fileBytes: /],
  ['a bad rate window', { rateLimit: { public: { windowMs: 0 } } }, /rateLimit\.public\.windowMs: /],
  ['an IPv6 prefix under /32', { rateLimit: { ipv6Prefix: 31 } }, /rateLimit\.ipv6Prefix: .*>=32/],
  ['an IPv6 prefix over /128', { rateLimit: { ipv6Prefix: 129 } }, /rateLimit\.ipv6Prefix: .*<=128/],
  ['a fractional IPv6 prefix', { rateLimit: { ipv6Prefix: 64.5 } }, /rateLimit\.ipv6Prefix: /],
  ['a referer URL where a host belongs', { referer: { allow: ['https://app.example.com/'] } }, /referer\.allow\.0: must be a host/],
  ['an SSO address that is not http(s)', { sso: { authUrl: 'ftp://sso.example.com' } }, /sso\.authUrl: must be an http/],
  ['an invalid default tenant', { tenancy: { defaultTenant: 'no spaces' } }, /tenancy\.defaultTenant: /],
  ['a non-URL SSO address', { sso: { authUrl: 'not a url' } }, /sso\.authUrl: /],
  ['a token lifetime under one second', { auth: { tokenTtl: '500ms' } }, /auth\.tokenTtl: must be a whole number of seconds/],
  ['a token lifetime of zero', { auth: { tokenTtl: '0s' } }, /auth\.tokenTtl: /],
  ['a token lifetime with a space', { auth: { tokenTtl: '12 h' } }, /auth\.tokenTtl: /],
  ['a fractional token lifetime', { auth: { tokenTtl: 1.5 } }, /auth\.tokenTtl: /],
];

for (const [what, expert, message] of invalid) {
  test(`an expert file with ${what} is refused with the key named`, (t) => {
    const file = path.join(scratch(), 'expert.json');
    writeFileSync(file, JSON.stringify(expert));
    const error = t.throws(() => loadConfig({ env: { ...baseEnv(), EXPERT_CONFIG: file } }), { instanceOf: ConfigError });
    t.regex(error.message, message);
  });
}

test('a duration longer than setTimeout or PostgreSQL can hold is refused naming its key, the longest they can is accepted', (t) => {
  const longestHandlerMs = LONGEST_TIMEOUT_MS - IDLE_IN_TRANSACTION_MARGIN_MS;
  for (const [key, expert] of [
    ['sso.timeoutMs', { sso: { timeoutMs: 3_000_000_000 } }],
    ['sso.timeoutMs', { sso: { timeoutMs: LONGEST_TIMEOUT_MS + 1 } }],
    ['limits.handlerMs', { limits: { handlerMs: 3_000_000_000 } }],
    // Under setTimeout's limit, but idle_in_transaction_session_timeout, 5 s more, would not be.
    ['limits.handlerMs', { limits: { handlerMs: 2_147_483_000 } }],
    ['limits.handlerMs', { limits: { handlerMs: longestHandlerMs + 1 } }],
    ['rateLimit.public.windowMs', { rateLimit: { public: { windowMs: 3_000_000_000 } } }],
  ] as const) {
    const error = t.throws(() => loadConfig({ env: baseEnv(), expert }), { instanceOf: ConfigError }, key);
    const [, , limit] = /from (\d+) to (\d+)$/.exec(error.message) ?? [];
    t.is(error.message, `expert configuration: ${key}: must be a whole number of milliseconds from 1 to ${limit}`);
  }
  const { config } = loadConfig({
    env: baseEnv(),
    expert: { sso: { timeoutMs: LONGEST_TIMEOUT_MS }, limits: { handlerMs: longestHandlerMs }, rateLimit: { public: { windowMs: LONGEST_TIMEOUT_MS } } },
  });
  t.is(config.sso.timeoutMs, 2_147_483_647);
  t.is(config.limits.handlerMs, 2_147_478_647);
  t.is(config.rateLimit.public.windowMs, 2_147_483_647);
});

test('PROJECTS_DIR naming no folder is refused, as EXPERT_CONFIG naming no file is', (t) => {
  const folder = scratch();
  t.is(loadConfig({ env: { ...baseEnv(), PROJECTS_DIR: folder }, expert: {} }).config.projectsDir, folder);
  for (const typo of [path.join(folder, 'typo'), path.join(folder, 'expert.json')]) {
    if (typo.endsWith('.json')) writeFileSync(typo, '{}');
    t.throws(() => loadConfig({ env: { ...baseEnv(), PROJECTS_DIR: typo }, expert: {} }), { instanceOf: ConfigError, message: `PROJECTS_DIR: folder ${typo} does not exist` });
  }
});

test('an expert file that is not JSON is refused with the file named', (t) => {
  const file = path.join(scratch(), 'expert.json');
  writeFileSync(file, '{ "spaces": ');
  const error = t.throws(() => loadConfig({ env: { ...baseEnv(), EXPERT_CONFIG: file } }), { instanceOf: ConfigError });
  t.true(error.message.includes(file));
});

test('an EXPERT_CONFIG naming a missing file is refused', (t) => {
  const error = t.throws(() => loadConfig({ env: { ...baseEnv(), EXPERT_CONFIG: '/nonexistent/expert.json' } }), { instanceOf: ConfigError });
  t.regex(error.message, /EXPERT_CONFIG/);
});

test('a rate limit given in part keeps the default of the key left out', (t) => {
  const { config } = loadConfig({ env: baseEnv(), expert: { rateLimit: { login: { max: 5 }, public: { windowMs: 1000 } } } });
  t.deepEqual(config.rateLimit.login, { windowMs: 60_000, max: 5 });
  t.deepEqual(config.rateLimit.public, { windowMs: 1000, max: 600 });
});

test('referer hosts: names, wildcards, ports and IP addresses are accepted', (t) => {
  const allow = ['example.com', '*.example.org', 'localhost:8080', '127.0.0.1', '[::1]:3000', 'App.Example.com'];
  t.deepEqual(loadConfig({ env: baseEnv(), expert: { referer: { allow } } }).config.referer.allow, allow);
});

test('an environment variable set to nothing counts as unset: PORT= is 3000, not a random port', (t) => {
  const { config, secrets } = loadConfig({ env: { ...baseEnv(), PORT: '', DATABASE_URL: '', LOG_LEVEL: '', REDIS_URL: '' }, expert: {} });
  t.is(config.port, 3000);
  t.is(config.logLevel, 'info');
  t.true(config.database.embedded);
  t.is(secrets.redisUrl, undefined);
});

test('invalid environment variables are refused with the variable named', (t) => {
  t.throws(() => loadConfig({ env: { ...baseEnv(), PORT: 'eighty' }, expert: {} }), { message: /environment variable PORT/ });
  for (const PORT of ['1e3', '0x50', ' 80', '65536', '-1']) {
    t.throws(() => loadConfig({ env: { ...baseEnv(), PORT }, expert: {} }), { message: /environment variable PORT: must be a port number/ }, PORT);
  }
  t.throws(() => loadConfig({ env: { ...baseEnv(), DATABASE_URL: 'mysql://x' }, expert: {} }), { message: /DATABASE_URL/ });
  t.throws(() => loadConfig({ env: { ...baseEnv(), LOG_LEVEL: 'loud' }, expert: {} }), { message: /LOG_LEVEL/ });
  // A bearer token is one word: one with a space could never be sent, and /metrics would be 401 for ever.
  t.throws(() => loadConfig({ env: { ...baseEnv(), METRICS_TOKEN: 'two words of token text' }, expert: {} }), { message: /METRICS_TOKEN: must hold no space/ });
  // A header arrives read as Latin-1 and may hold no control character: a token with "é" (sent
  // as two bytes, read as "Ã©") or a tab never matched, and every scrape was 401.
  for (const METRICS_TOKEN of ['metrics-tokén-0123456789', 'metrics-token-0123456789\u0001', 'metrics\ttoken-0123456789']) {
    const error = t.throws(() => loadConfig({ env: { ...baseEnv(), METRICS_TOKEN }, expert: {} }), { instanceOf: ConfigError }, JSON.stringify(METRICS_TOKEN));
    t.is(error.message, 'environment variable METRICS_TOKEN: must hold no space and only printable ASCII (a bearer token is one word of a header)');
  }
  t.is(loadConfig({ env: { ...baseEnv(), METRICS_TOKEN: 'A-z0_9.~+/=!#$%&*' }, expert: {} }).secrets.metricsToken, 'A-z0_9.~+/=!#$%&*');
});

test('DATABASE_POOL_MAX sizes the pool: 10 by default, a whole number from 1 to 1000', (t) => {
  t.is(loadConfig({ env: baseEnv(), expert: {} }).config.database.poolMax, 10);
  t.is(loadConfig({ env: { ...baseEnv(), DATABASE_POOL_MAX: '25' }, expert: {} }).config.database.poolMax, 25);
  for (const DATABASE_POOL_MAX of ['0', '1001', 'ten', '2.5', '-3', ' 4']) {
    t.throws(() => loadConfig({ env: { ...baseEnv(), DATABASE_POOL_MAX }, expert: {} }), { message: /environment variable DATABASE_POOL_MAX: must be a whole number from 1 to 1000/ }, DATABASE_POOL_MAX);
  }
});

test('DATABASE_CONNECT_TIMEOUT_MS bounds the wait for a database connection: 1500 by default, 100 to 600000 ms', (t) => {
  t.is(loadConfig({ env: baseEnv(), expert: {} }).config.database.connectTimeoutMs, 1500);
  t.is(loadConfig({ env: { ...baseEnv(), DATABASE_CONNECT_TIMEOUT_MS: '10000' }, expert: {} }).config.database.connectTimeoutMs, 10_000);
  for (const DATABASE_CONNECT_TIMEOUT_MS of ['99', '600001', '1.5s', '2.5', '-3', ' 4000']) {
    t.throws(
      () => loadConfig({ env: { ...baseEnv(), DATABASE_CONNECT_TIMEOUT_MS }, expert: {} }),
      { message: /environment variable DATABASE_CONNECT_TIMEOUT_MS: must be a whole number of milliseconds from 100 to 600000/ },
      DATABASE_CONNECT_TIMEOUT_MS,
    );
  }
});

test('DATABASE_PREPARED_STATEMENTS: true by default, true or false', (t) => {
  t.true(loadConfig({ env: baseEnv(), expert: {} }).config.database.preparedStatements);
  t.false(loadConfig({ env: { ...baseEnv(), DATABASE_PREPARED_STATEMENTS: 'false' }, expert: {} }).config.database.preparedStatements);
  for (const DATABASE_PREPARED_STATEMENTS of ['no', '0', 'FALSE', 'yes']) {
    t.throws(() => loadConfig({ env: { ...baseEnv(), DATABASE_PREPARED_STATEMENTS }, expert: {} }), { message: /environment variable DATABASE_PREPARED_STATEMENTS: must be true or false/ }, DATABASE_PREPARED_STATEMENTS);
  }
});

test('DATABASE_DIRECT_URL is a secret like DATABASE_URL, and needs it', (t) => {
  const direct = 'postgres://owner:hunter2@db.example/app';
  const { config, secrets } = loadConfig({ env: { ...baseEnv(), DATABASE_URL: 'postgres://app:pw@pooler.example/app', DATABASE_DIRECT_URL: direct }, expert: {} });
  t.is(secrets.databaseDirectUrl, direct);
  t.false(JSON.stringify(config).includes('hunter2'));
  t.throws(() => loadConfig({ env: { ...baseEnv(), DATABASE_DIRECT_URL: direct }, expert: {} }), { message: /DATABASE_DIRECT_URL: needs DATABASE_URL/ });
  t.throws(() => loadConfig({ env: { ...baseEnv(), DATABASE_URL: direct, DATABASE_DIRECT_URL: 'mysql://x' }, expert: {} }), { message: /environment variable DATABASE_DIRECT_URL: must be a postgres/ });
});

test('a DATABASE_URL or DATABASE_DIRECT_URL that pg could not read is refused at start-up naming the variable, without its password', (t) => {
  const usable = 'postgres://app:pw@db.example/app';
  const message = 'must be a postgres:// URL that pg can read, its port (if any) from 1 to 65535';
  for (const url of ['postgres://u:hunter2@127.0.0.1:99999/x', 'postgres://u:hunter2@127.0.0.1:0/x', 'postgres://u:hunter2@[::1/x', 'postgres://u:hunter2@db.example/x?port=70000', 'mysql://u:hunter2@db.example/x']) {
    for (const [variable, env] of [
      ['DATABASE_URL', { DATABASE_URL: url }],
      ['DATABASE_DIRECT_URL', { DATABASE_URL: usable, DATABASE_DIRECT_URL: url }],
    ] as const) {
      const error = t.throws(() => loadConfig({ env: { ...baseEnv(), ...env }, expert: {} }), { instanceOf: ConfigError }, `${variable}=${url}`);
      t.is(error.message, `environment variable ${variable}: ${message}`);
    }
  }
  for (const url of ['postgres://u:pw@127.0.0.1:65535/x', 'postgresql://u:p%20w@db.example/x', 'postgres://u@/x?host=/run/postgresql', 'postgres://[::1]:5432/x?port=6432']) {
    t.is(loadConfig({ env: { ...baseEnv(), DATABASE_URL: url }, expert: {} }).secrets.databaseUrl, url);
  }
});

test('a REDIS_URL that a Redis client could not open is refused at start-up, without its password in the message', (t) => {
  for (const REDIS_URL of ['redis://:secret@127.0.0.1:99999', 'redis://:se%zzcret@127.0.0.1:6379', 'rediss://[secret', 'http://:secret@127.0.0.1:6379', 'redis://user:se%ZZcret@host', 'redis://:secret@127.0.0.1:6379/abc']) {
    const error = t.throws(() => loadConfig({ env: { ...baseEnv(), REDIS_URL }, expert: {} }), { message: /environment variable REDIS_URL/ }, REDIS_URL);
    t.false(error?.message.includes('secret'), error?.message);
  }
  for (const REDIS_URL of ['redis://127.0.0.1:6379', 'rediss://:p%40ss@cache.internal:6380/2', 'redis://localhost', 'redis://localhost/']) {
    t.is(loadConfig({ env: { ...baseEnv(), REDIS_URL }, expert: {} }).secrets.redisUrl, REDIS_URL);
  }
});

test('REDIS_CLUSTER_NODES lists a cluster\'s seed nodes, checked as REDIS_URL is, never with a database nor with REDIS_URL too', (t) => {
  const loaded = loadConfig({ env: { ...baseEnv(), REDIS_CLUSTER_NODES: 'redis://:p%40ss@10.0.0.1:7000, redis://10.0.0.2:7000,' }, expert: {} });
  t.deepEqual(loaded.secrets.redisClusterNodes, ['redis://:p%40ss@10.0.0.1:7000', 'redis://10.0.0.2:7000']);
  t.deepEqual(loaded.config.redis, { enabled: true, cluster: true });
  t.false(JSON.stringify(loaded.config).includes('p%40ss'));
  for (const REDIS_CLUSTER_NODES of ['redis://:secret@10.0.0.1:7000/2', 'redis://:secret@10.0.0.1:99999', 'http://:secret@10.0.0.1:7000', ',']) {
    const error = t.throws(() => loadConfig({ env: { ...baseEnv(), REDIS_CLUSTER_NODES }, expert: {} }), { message: /environment variable REDIS_CLUSTER_NODES/ }, REDIS_CLUSTER_NODES);
    t.false(error?.message.includes('secret'), error?.message);
  }
  t.throws(() => loadConfig({ env: { ...baseEnv(), REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000' }, expert: {} }), { message: /REDIS_CLUSTER_NODES: set it or REDIS_URL, not both/ });
  t.deepEqual(loadConfig({ env: { ...baseEnv(), REDIS_CLUSTER_NODES: '' }, expert: {} }).config.redis, { enabled: false, cluster: false });
});

test('without JWT_SECRET a secret is generated once and kept with mode 600', (t) => {
  const dataDir = scratch();
  const first = loadConfig({ env: { DATA_DIR: dataDir }, expert: {} }).secrets.jwtSecret;
  const second = loadConfig({ env: { DATA_DIR: dataDir }, expert: {} }).secrets.jwtSecret;
  t.is(first, second);
  t.true(first.length >= 32);
  const file = path.join(dataDir, 'jwt-secret');
  t.is(statSync(file).mode & 0o777, 0o600);
  t.is(readFileSync(file, 'utf8').trim(), first);
});

test('sections that are not built in are kept for the projects, out of the configuration', (t) => {
  const { config, secrets } = loadConfig({ env: { ...baseEnv(), SHOP_API_KEY: 'k1' }, expert: { shop: { apiKey: 'k2' }, spaces: { enabled: true } } });
  t.false('shop' in config);
  t.false(JSON.stringify(config).includes('k2'));
  t.true(config.spaces.enabled);
  t.deepEqual(secrets.projectSettings.sections, { shop: { apiKey: 'k2' } });
  t.is(secrets.projectSettings.environment.SHOP_API_KEY, 'k1');
});

test('a token lifetime is read in seconds: numbers and digit strings alike, or with a unit', (t) => {
  const cases: Array<[string | number, number | undefined]> = [
    [3600, 3600], ['3600', 3600], ['90s', 90], ['15m', 900], ['12h', 43_200], ['7d', 604_800],
    ['60000ms', undefined], ['0', undefined], [0, undefined], [-5, undefined], ['1.5h', undefined], ['', undefined],
  ];
  for (const [value, seconds] of cases) t.is(durationSeconds(value), seconds, String(value));
});

test('a token lifetime longer than a token can carry is refused at start-up, not by every request', (t) => {
  // 2^53 - 1 s was accepted: every login then signed a token whose exp is no safe integer, and
  // every token was refused (401). 36500 days is the longest, as for spaces.trashDays.
  for (const tokenTtl of [Number.MAX_SAFE_INTEGER, '100000000d', '36501d', 36_500 * 86_400 + 1]) {
    const error = t.throws(() => loadConfig({ env: baseEnv(), expert: { auth: { tokenTtl } } }), { instanceOf: ConfigError }, String(tokenTtl));
    t.regex(error.message, /^expert configuration: auth\.tokenTtl: .*at most 36500 days/, String(tokenTtl));
  }
  t.is(durationSeconds('36500d'), 3_153_600_000);
  t.is(loadConfig({ env: baseEnv(), expert: { auth: { tokenTtl: '36500d' } } }).config.auth.tokenTtl, '36500d');
});

test('a kept JWT secret file that is empty stops start-up with the file named', (t) => {
  const dataDir = scratch();
  writeFileSync(path.join(dataDir, 'jwt-secret'), '\n', { mode: 0o600 });
  const error = t.throws(() => loadConfig({ env: { DATA_DIR: dataDir }, expert: {} }), { instanceOf: ConfigError });
  t.regex(error.message, /jwt-secret: the kept JWT secret is shorter than 16 characters/);
});

test('first starts racing for the JWT secret all get the same one', async (t) => {
  const dataDir = scratch();
  const script = `import { loadConfig } from ${JSON.stringify(path.resolve('lib/config/index.ts'))};
process.stdout.write(loadConfig({ env: { DATA_DIR: ${JSON.stringify(dataDir)} }, expert: {} }).secrets.jwtSecret);`;
  const { execFile } = await import('node:child_process');
  const run = () =>
    new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', script], (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
  const secrets = await Promise.all(Array.from({ length: 6 }, run));
  t.is(new Set(secrets).size, 1);
  t.is(readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim(), secrets[0]);
});

test('limits.tenantConnections and limits.queueMs: defaults, and values that cannot be a share of the pool refused with the key named', (t) => {
  const { config } = loadConfig({ env: baseEnv(), expert: {} });
  t.is(config.limits.tenantConnections, undefined, 'unset: half the pool, at least one connection (defaultTenantConnections)');
  t.is(config.limits.queueMs, 2000);
  t.is(loadConfig({ env: { ...baseEnv(), DATABASE_POOL_MAX: '4' }, expert: { limits: { tenantConnections: 4, queueMs: 250 } } }).config.limits.tenantConnections, 4);
  for (const tenantConnections of [0, -1, 1.5, '3']) {
    t.throws(() => loadConfig({ env: baseEnv(), expert: { limits: { tenantConnections } } as never }), { instanceOf: ConfigError, message: /limits\.tenantConnections: must be a whole number of connections, at least 1/ }, String(tenantConnections));
  }
  t.throws(() => loadConfig({ env: { ...baseEnv(), DATABASE_POOL_MAX: '4' }, expert: { limits: { tenantConnections: 5 } } }), {
    instanceOf: ConfigError,
    message: "expert configuration: limits.tenantConnections: 5 is more than the pool holds (DATABASE_POOL_MAX is 4); a tenant's share must be at most the pool",
  });
  t.throws(() => loadConfig({ env: baseEnv(), expert: { limits: { queueMs: 0 } } }), { instanceOf: ConfigError, message: /limits\.queueMs/ });
});

test('limits.answerStallMs: 120 s unless set; a value out of 1 s to an hour refused with the key named', (t) => {
  t.is(loadConfig({ env: baseEnv(), expert: {} }).config.limits.answerStallMs, 120_000);
  for (const answerStallMs of [999, 3_600_001, 1.5, '60000']) {
    t.throws(() => loadConfig({ env: baseEnv(), expert: { limits: { answerStallMs } } as never }), { instanceOf: ConfigError, message: /limits\.answerStallMs: must be a whole number of milliseconds from 1000 to 3600000/ }, String(answerStallMs));
  }
});

test('limits.resultBytes: 64 MiB unless set; a value out of 1 KiB to 1 GiB refused with the key named', (t) => {
  t.is(loadConfig({ env: baseEnv(), expert: {} }).config.limits.resultBytes, 67_108_864);
  t.is(loadConfig({ env: baseEnv(), expert: { limits: { resultBytes: 4096 } } }).config.limits.resultBytes, 4096);
  for (const resultBytes of [0, 1023, 1.5, 2 ** 30 + 1, '4096']) {
    t.throws(() => loadConfig({ env: baseEnv(), expert: { limits: { resultBytes } } as never }), { instanceOf: ConfigError, message: /limits\.resultBytes: must be a whole number of bytes from 1024 to 1073741824/ }, String(resultBytes));
  }
});
