import { execFile } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual, promisify } from 'node:util';
import test from 'ava';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { createKnex } from '../../lib/db/connect.ts';
import { distributionKinds, tenantTables } from '../../lib/db/distribute.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { createIndexConcurrently } from '../../lib/db/migration-tools.ts';
import { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { documentStore } from '../../lib/documents/index.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { dropApplicationTenantConditionForTest } from '../helpers/row-level-security-alone.ts';
import { type CitusCluster, startCitusCluster } from '../helpers/citus.ts';
import { adminOf, clearState, comparableBody, leaks, PASSWORD, type ScriptStep, scriptStep, STEPS_PER_ROUND, storedState, TENANTS, workerScript } from '../helpers/fleet-workload.ts';
import { hmacToken, systemClaims } from '../helpers/forged-tokens.ts';
import { REPO_PROJECTS_DIR } from '../helpers/sample.ts';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess } from '../helpers/service-process.ts';
import { describeExchange, type Exchange, sendRequest, steadyLoad } from '../helpers/steady-load.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * spaceport on Citus (SPEC §15.4, §15.6): Citus built from the release tarball (cached), a
 * coordinator and two workers on loopback, the service's database migrated and distributed by
 * the documented targets (`make migrate`, `make distribute`), and any statement touching more
 * than one shard an error (`citus.multi_task_query_log_level`). Without the tarball (outside
 * CI) the tests are skipped, and say so.
 */
const run = promisify(execFile);
const CLI = path.resolve(import.meta.dirname, '../../lib/cli/main.ts');
const WORKERS = 8;
const ROUNDS = 6;
const UNLIMITED = { windowMs: 60_000, max: 1_000_000 };

const cluster = await startCitusCluster('spaceport_citus_test').catch((error: Error) => ({ missing: error.message }));
if ('missing' in cluster && !process.env.CI) process.stderr.write(`${cluster.missing}: the Citus tests are skipped\n`);
const citusTest = 'missing' in cluster && !process.env.CI ? test.serial.skip : test.serial;

/** A system JWT of each tenant's admin, on each database (their uids differ). */
const tokens: Record<'citus' | 'plain', Record<string, string>> = { citus: {}, plain: {} };
let citusOwner: Knex;
let plainOwner: Knex;

const target = (): CitusCluster => {
  if ('missing' in cluster) throw new Error(cluster.missing);
  return cluster;
};

/** `make <target>`'s command, as a DBA runs it, against the coordinator. */
async function make(command: string): Promise<string> {
  const environment = { ...process.env, DATABASE_URL: target().url, JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: scratchFolder('citus-data'), LOG_LEVEL: 'warn' };
  const { stdout } = await run(process.execPath, [CLI, command], { env: environment, timeout: 300_000 });
  return stdout.trim();
}

test.before(async () => {
  if ('missing' in cluster) return;
  await make('migrate');
  await make('distribute');
  await cluster.query("alter database spaceport_citus_test set citus.multi_task_query_log_level = 'error'");
  // The owner's view reads and clears across tenants, on every shard: its sessions only allow that.
  citusOwner = knex({
    client: 'pg',
    connection: cluster.url,
    pool: { min: 0, max: 4, afterCreate: (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => void connection.query("set citus.multi_task_query_log_level = 'off'", (error: Error | null) => done(error, connection)) },
  });
  plainOwner = createKnex(await testDatabaseUrl());
  await migrateLatest(plainOwner);
  const citusTenants = new TenantDatabase(cluster.url, { scopeForm: 'citus' });
  const plainTenants = new TenantDatabase(await testDatabaseUrl());
  for (const tenant of TENANTS) {
    await createTenant(citusOwner, tenant);
    await createTenant(plainOwner, tenant);
    for (const [name, database] of [['citus', citusTenants], ['plain', plainTenants]] as const) {
      const { account } = await saveAccount(database, tenant, { username: adminOf(tenant), password: PASSWORD, role: 'admin' });
      tokens[name][tenant] = hmacToken({ alg: 'HS256', typ: 'JWT' }, systemClaims(account.uid, tenant), TEST_JWT_SECRET);
    }
  }
  await citusTenants.close();
  await plainTenants.close();
});

test.after.always(async () => {
  await citusOwner?.destroy();
  await plainOwner?.destroy();
  if (!('missing' in cluster)) await cluster.stop();
  await dropTestDatabase();
});

function projectsDir(): string {
  const folder = scratchFolder('citus-projects');
  symlinkSync(path.join(REPO_PROJECTS_DIR, 'sample'), path.join(folder, 'sample'));
  symlinkSync(path.resolve(import.meta.dirname, '../fixtures/projects/fleet/notes'), path.join(folder, 'notes'));
  return folder;
}

const serviceOptions = (databaseUrl: string) => ({
  databaseUrl,
  projectsDir: projectsDir(),
  expert: { spaces: { enabled: true }, rateLimit: { public: UNLIMITED, login: UNLIMITED } },
});

async function runWorkload(origin: string, on: 'citus' | 'plain'): Promise<Array<[Exchange, ScriptStep]>> {
  const scripts = Array.from({ length: WORKERS }, (_, worker) => workerScript(origin, tokens[on], worker, ROUNDS * STEPS_PER_ROUND));
  const answered = await Promise.all(
    scripts.map(async (script) => {
      const pairs: Array<[Exchange, ScriptStep]> = [];
      for (const step of script) pairs.push([await sendRequest(step), step]);
      return pairs;
    }),
  );
  return answered.flat();
}

/** An account's uid is made anew in each database: compared as its presence only. */
function withoutUids(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUids);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, key === '_id' || key === 'uid' ? '<uid>' : withoutUids(each)]));
}

const answerOf = ([exchange, step]: [Exchange, ScriptStep]) => ({
  request: step.label,
  status: exchange.status,
  body: step.comparable ? withoutUids(comparableBody(exchange.body)) : '<depends on other workers>',
});

citusTest('make distribute makes tenants a reference table and every tenant table distributed by tenant, co-located; again, it changes nothing', async (t) => {
  const tables = await tenantTables(citusOwner);
  const kinds = await distributionKinds(citusOwner);
  t.true(tables.length >= 5, tables.join(', '));
  t.is(kinds.get('tenants'), 'n');
  t.deepEqual(tables.filter((table) => kinds.get(table) !== 'h'), [], 'every table with a tenant column is distributed');
  const { rows } = await citusOwner.raw<{ rows: Array<{ groups: string }> }>("select count(distinct colocationid) as groups from pg_dist_partition where partmethod = 'h'");
  t.is(Number(rows[0]?.groups), 1, 'all in one co-location group');
  const again = await make('distribute');
  t.false(/distributed by tenant|reference table/.test(again), again);
});

citusTest('an index an expand migration builds again (a rerun after a crash) stays valid on the coordinator, where Citus would mark it invalid', async (t) => {
  const validity = async () => (await citusOwner.raw<{ rows: unknown[] }>("select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = 'documents_username_per_tenant'")).rows;
  t.deepEqual(await validity(), [{ valid: true }]);
  await createIndexConcurrently(citusOwner, 'documents_username_per_tenant', 'on documents (tenant, account_username) where account_username is not null', { unique: true });
  t.deepEqual(await validity(), [{ valid: true }], 'CREATE INDEX CONCURRENTLY IF NOT EXISTS on an index that exists leaves it invalid on a Citus coordinator');
});

citusTest('row-level security alone keeps tenants apart on the workers: without the application condition, a read over every shard sees its tenant only, and a write of another tenant is refused', async (t) => {
  // This test reads across shards on purpose; the others run with such statements refused.
  await target().query("alter database spaceport_citus_test set citus.multi_task_query_log_level = 'off'");
  const database = new TenantDatabase(target().url, { scopeForm: 'citus', queryTimeoutMs: 10_000 });
  const restore = dropApplicationTenantConditionForTest();
  try {
    for (const tenant of TENANTS) await documentStore(database, tenant).collection('walls').insertMany([{ _id: `${tenant}-1`, owner: tenant }, { _id: `${tenant}-2`, owner: tenant }]);
    for (const tenant of TENANTS) {
      const seen = await documentStore(database, tenant).collection('walls').find({}).toArray();
      t.deepEqual(seen.map((document) => document.owner), [tenant, tenant], tenant);
      const { rows } = await database.query<{ tenant: string }>(tenant, { sql: 'select distinct tenant from documents', bindings: [] });
      t.deepEqual(rows, [{ tenant }], `every shard answers ${tenant}'s rows only`);
    }
    const [alpha = '', beta = ''] = TENANTS;
    const crossing = database.query(alpha, { sql: "insert into documents (tenant, collection, id, doc) values ($1, 'walls', 'x', '{}')", bindings: [beta] });
    await t.throwsAsync(crossing, { message: /row-level security/ });
    t.is((await citusOwner('documents').where({ collection: 'walls', id: 'x' })).length, 0);
  } finally {
    restore();
    await database.close();
    await citusOwner('documents').where({ collection: 'walls' }).delete();
    await target().query("alter database spaceport_citus_test set citus.multi_task_query_log_level = 'error'");
  }
});

citusTest('every document operation goes to one shard, deleteOne by a field, value filters, a $in and $nin of 150 values, upserts included (a statement on two shards would fail)', async (t) => {
  // A session of its own: the database's setting reaches sessions opened after it was set.
  const probe = await target().query("delete from documents where collection = 'none'").then(
    () => 'answered',
    (error: Error) => error.message,
  );
  t.regex(probe, /multi-task query about to be executed/, 'a statement over every shard is refused here');
  const database = new TenantDatabase(target().url, { scopeForm: 'citus', queryTimeoutMs: 10_000 });
  t.teardown(() => database.close());
  const items = documentStore(database, 'alpha').collection('operations');
  const hundredFifty = Array.from({ length: 150 }, (_, n) => n);
  await items.insertMany(Array.from({ length: 200 }, (_, n) => ({ _id: `d${n}`, n, tags: ['a', `t${n}`], meta: { k: n } })));
  t.is((await items.find({ n: { $gte: 5 } }).limit(3).toArray()).length, 3);
  t.is((await items.deleteOne({ n: { $gte: 190 } })).deletedCount, 1);
  t.is((await items.deleteOne({ _id: 'd1' })).deletedCount, 1);
  t.deepEqual(await items.find({ meta: { k: 3 } }).toArray(), [{ _id: 'd3', n: 3, tags: ['a', 't3'], meta: { k: 3 } }]);
  t.deepEqual((await items.find({ tags: ['a', 't4'] }).toArray()).map((document) => document._id), ['d4']);
  t.is(await items.countDocuments({ n: { $in: hundredFifty } }), 149);
  t.is(await items.countDocuments({ n: { $nin: hundredFifty } }), 49);
  t.is((await items.updateMany({ n: { $lt: 10 } }, { $inc: { n: 1000 } })).modifiedCount, 9);
  t.is((await items.updateOne({ _id: 'new' }, { $set: { x: 1 } }, { upsert: true })).upsertedCount, 1);
  t.deepEqual((await items.findOneAndUpdate({ _id: 'd2' }, { $push: { tags: 'z' } }))?._id, 'd2');
  t.is((await items.deleteMany({ n: { $gte: 100 } })).deletedCount, 108);
  await items.deleteMany({});
});

citusTest('the two-tenant workload on Citus answers as on plain PostgreSQL: 0 errors, 0 leaks, no statement on more than one shard', async (t) => {
  const onCitus = await startServiceProcess(t, serviceOptions(target().url));
  const onPlain = await startServiceProcess(t, serviceOptions(await testDatabaseUrl()));
  await clearState(citusOwner);
  await clearState(plainOwner);
  const plain = await runWorkload(onPlain.url, 'plain');
  const citus = await runWorkload(onCitus.url, 'citus');
  const errors = citus.filter(([exchange, step]) => exchange.status !== step.expected);
  const leaked = citus.filter(([exchange, step]) => leaks(exchange, step.tenant));
  const differing = citus.flatMap((pair, index) => {
    const reference = plain[index];
    return reference && isDeepStrictEqual(answerOf(pair), answerOf(reference)) ? [] : [{ citus: answerOf(pair), plain: reference && answerOf(reference) }];
  });
  t.log(`Citus: ${citus.length} requests, ${errors.length} errors, ${leaked.length} leaks, ${differing.length} answers unlike plain PostgreSQL's`);
  t.deepEqual(errors.slice(0, 10).map(([exchange]) => describeExchange(exchange)), []);
  t.deepEqual(leaked.slice(0, 10).map(([exchange]) => describeExchange(exchange)), []);
  t.deepEqual(differing.slice(0, 5), []);
  t.deepEqual(await storedState(citusOwner), await storedState(plainOwner), 'the rows left are the same');
  const multiShard = onCitus.logEntries().filter((entry) => /multi-task|more than one shard/i.test(JSON.stringify(entry)));
  t.deepEqual(multiShard.slice(0, 5), []);
});

/** Accounts limited to some spaces or schemas (SPEC §6.2), and what each may ask of the spaces. */
const LIMITED = [
  { username: 'schemas-s1', spaces: [], schemas: ['s1'] },
  { username: 'schemas-s2-x', spaces: [], schemas: ['s2', 'x'] },
  { username: 'schemas-none', spaces: [], schemas: [] },
  { username: 'schemas-all', spaces: [], schemas: ['*'] },
  { username: 'spaces-two', spaces: ['limited-a', 'limited-c'], schemas: ['s1', 's2'] },
  { username: 'spaces-one-all', spaces: ['limited-b'], schemas: ['*'] },
];
const LIMITED_SPACES = [
  { name: 'limited-a', schemas: ['s1'] },
  { name: 'limited-b', schemas: ['s2', 's1', 'x'] },
  { name: 'limited-c', schemas: [] },
  { name: 'limited-d', schemas: ['x'] },
];

citusTest('an account limited to some spaces or schemas reads the spaces through the coordinator as on plain PostgreSQL, each statement on one shard', async (t) => {
  const onCitus = await startServiceProcess(t, serviceOptions(target().url));
  const onPlain = await startServiceProcess(t, serviceOptions(await testDatabaseUrl()));
  await clearState(citusOwner);
  await clearState(plainOwner);
  const answers: Record<'citus' | 'plain', unknown[]> = { citus: [], plain: [] };
  for (const [on, service, url] of [['citus', onCitus, target().url], ['plain', onPlain, await testDatabaseUrl()]] as const) {
    const database = new TenantDatabase(url, { scopeForm: on === 'citus' ? 'citus' : 'statement', queryTimeoutMs: 10_000 });
    try {
      for (const tenant of TENANTS) {
        const admin = { tenant, authorization: `Bearer ${tokens[on][tenant]}`, 'content-type': 'application/json' };
        for (const space of LIMITED_SPACES) {
          const created = await fetch(`${service.url}/spaces`, { method: 'POST', headers: admin, body: JSON.stringify(space) });
          t.is(created.status, 201, `${on} ${tenant} ${space.name}`);
        }
        for (const limited of LIMITED) {
          const { account } = await saveAccount(database, tenant, { ...limited, password: PASSWORD, role: 'member' });
          const headers = { tenant, authorization: `Bearer ${hmacToken({ alg: 'HS256', typ: 'JWT' }, systemClaims(account.uid, tenant), TEST_JWT_SECRET)}` };
          for (const path of ['/spaces', ...LIMITED_SPACES.map((space) => `/spaces/${space.name}`)]) {
            const response = await fetch(`${service.url}${path}`, { headers });
            answers[on].push({ tenant, account: limited.username, path, status: response.status, body: namesAndSchemas(await response.json()) });
          }
        }
      }
    } finally {
      await database.close();
    }
  }
  const differing = answers.citus.filter((answer, index) => !isDeepStrictEqual(answer, answers.plain[index]));
  const seen = answers.citus.filter((answer) => (answer as { status: number }).status === 200).length;
  t.log(`${answers.citus.length} reads by ${LIMITED.length} limited accounts of each tenant, ${seen} answered 200, ${differing.length} unlike plain PostgreSQL's`);
  t.deepEqual(differing.slice(0, 5), []);
  t.true(seen > 0 && seen < answers.citus.length, 'some spaces are hidden from some accounts, others shown');
  const multiShard = onCitus.logEntries().filter((entry) => /multi-task|more than one shard/i.test(JSON.stringify(entry)));
  t.deepEqual(multiShard.slice(0, 5), []);
});

/** A space or a list of them as names and schemas: their times and versions differ between databases. */
function namesAndSchemas(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(namesAndSchemas);
  if (body === null || typeof body !== 'object') return body;
  const { name, schemas, error, spaces } = body as Record<string, unknown>;
  return spaces === undefined ? { name, schemas, error } : { spaces: namesAndSchemas(spaces) };
}

/** The node holding a tenant's shard of `documents`, and the shard. */
async function placementOf(tenant: string): Promise<{ shard: string; port: number }> {
  const { rows } = await citusOwner.raw<{ rows: Array<{ shard: string; port: number }> }>(
    "select s.shardid::text as shard, p.nodeport as port from pg_dist_shard s join pg_dist_placement pl using (shardid) join pg_dist_node p using (groupid) where s.shardid = get_shard_id_for_distribution_column('documents', ?::text)",
    [tenant],
  );
  const [placement] = rows;
  if (placement === undefined) throw new Error(`no placement for ${tenant}`);
  return placement;
}

/** The service's statement limit: a write that waits longer than this for a lock is tried again (SPEC §15.4). */
const STATEMENT_LIMIT_MS = 1500;
/** How long each step of the move holds writes here at least: longer than the statement limit. */
const HOLD_WRITES_MS = 2500;

/**
 * Runs `sql`, a split or a move with `block_writes`, so that it holds writes for `holdMs` at
 * least, as a large shard or a busy node would: Citus's own hook for its isolation tests. With
 * `citus.running_under_citus_test_suite` on (superuser only, for this session alone), a step
 * that has blocked writes waits for advisory lock (44000, 55152) before it copies (Citus 13.2.2,
 * `ConflictWithIsolationTestingBeforeCopy` in replication/multi_logical_replication.c, called by
 * operations/shard_transfer.c and shard_split.c), which another session holds meanwhile. Both
 * key orders are held: the hook's tag and `pg_advisory_lock(int, int)`'s name the keys in
 * opposite orders, and only one of them must match. Resolves with the span the step took.
 */
async function heldStep(sql: string, bindings: unknown[], holdMs: number): Promise<{ from: number; to: number }> {
  const holder = new pg.Client({ connectionString: target().url });
  const mover = new pg.Client({ connectionString: target().url });
  await Promise.all([holder.connect(), mover.connect()]);
  try {
    await holder.query('select pg_advisory_lock(44000, 55152), pg_advisory_lock(55152, 44000)');
    await mover.query("set citus.running_under_citus_test_suite = on; set citus.multi_task_query_log_level = 'off'");
    const from = performance.now();
    const step = mover.query(sql, bindings);
    step.catch(() => undefined);
    await sleep(holdMs);
    await holder.query('select pg_advisory_unlock_all()');
    await step;
    return { from, to: performance.now() };
  } finally {
    await Promise.all([holder.end(), mover.end()]);
  }
}

citusTest(`a tenant isolated to a shard of its own and moved to the other worker under the workload, each step holding writes ${HOLD_WRITES_MS} ms (past the ${STATEMENT_LIMIT_MS} ms statement limit): 0 failed requests`, async (t) => {
  const onCitus = await startServiceProcess(t, serviceOptions(target().url));
  await clearState(citusOwner);
  const planned = new Map<string, ScriptStep>();
  const load = steadyLoad({
    workers: WORKERS,
    paceMs: 0,
    next: (worker, sequence) => {
      const step = scriptStep(onCitus.url, tokens.citus, worker, sequence);
      planned.set(step.label, step);
      return step;
    },
  });
  /** The split's and the move's spans, each holding writes to the shards it copies. */
  const steps: Array<{ from: number; to: number }> = [];
  let other: number | undefined;
  let failure: unknown;
  try {
    await sleep(2000);
    steps.push(await heldStep("select isolate_tenant_to_new_shard('documents', 'alpha', 'CASCADE', shard_transfer_mode => 'block_writes')", [], HOLD_WRITES_MS));
    const isolated = await placementOf('alpha');
    other = target().workerPorts.find((port) => port !== isolated.port);
    steps.push(
      await heldStep("select citus_move_shard_placement($1::bigint, '127.0.0.1', $2::int, '127.0.0.1', $3::int, shard_transfer_mode => 'block_writes')", [isolated.shard, isolated.port, other ?? 0], HOLD_WRITES_MS),
    );
    await sleep(2000);
  } catch (error) {
    failure = error;
  }
  // The load stops whatever the move did, and the move's failure is the test's.
  const exchanges = await load.stop();
  if (failure !== undefined) throw failure;
  const [first, last] = [steps[0], steps.at(-1)];
  const during = exchanges.filter((exchange) => first !== undefined && last !== undefined && exchange.endedAt >= first.from && exchange.startedAt <= last.to);
  const failed = exchanges.filter((exchange) => exchange.status !== planned.get(exchange.label)?.expected);
  const held = steps.map((step) => Math.round(step.to - step.from));
  const slowest = Math.max(...during.map((exchange) => exchange.endedAt - exchange.startedAt));
  t.log(`${exchanges.length} requests, ${during.length} of them during the split (${held[0]} ms) and the move (${held[1]} ms), ${failed.length} failed; the slowest during them ${Math.round(slowest)} ms`);
  t.is((await placementOf('alpha')).port, other ?? -1, 'the tenant now lives on the other worker');
  t.not((await placementOf('alpha')).shard, (await placementOf('beta')).shard, 'in a shard of its own');
  t.true(during.length > 0, 'requests were served during the move');
  t.true(held.every((ms) => ms >= HOLD_WRITES_MS), `each step held writes past the statement limit: ${held.join(', ')} ms`);
  t.deepEqual(failed.slice(0, 10).map((exchange) => describeExchange(exchange)), []);
});
