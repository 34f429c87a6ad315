import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import pg from 'pg';
import { distributeTables } from '../../lib/db/distribute.ts';
import { createKnex } from '../../lib/db/connect.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { createMigratedDatabaseOn } from '../../lib/testing/database.ts';
import { type MigratedDatabase, TEST_CONNECT_TIMEOUT_MS, testTenantDatabase } from './database.ts';
import { freePorts } from './ports.ts';
import { scratchFolder } from './scratch.ts';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const BUILD = path.resolve(import.meta.dirname, '../citus/build-citus.sh');
/** The release tarball the tests are given (issue 35): outside the repository, never part of it. */
export const CITUS_TARBALL = process.env.CITUS_TARBALL ?? path.resolve(import.meta.dirname, '../../../shared/vendor/citus-13.2.2.tar.gz');

/** A Citus coordinator and two workers on loopback, each a PostgreSQL 15 of its own run as `postgres`. */
export interface CitusCluster {
  /** `postgres://postgres@127.0.0.1:<port>/<database>` on the coordinator. */
  readonly url: string;
  readonly coordinatorPort: number;
  readonly workerPorts: readonly number[];
  /** The coordinator's server log (what it refused, with the statement). */
  readonly coordinatorLog: string;
  /** A superuser's query on a node (the coordinator unless a port is given), in the cluster's database unless another is named. */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[], port?: number, database?: string): Promise<Row[]>;
  stop(): Promise<void>;
}

/**
 * Builds Citus from the tarball (once: test/citus/build-citus.sh caches it) and starts the
 * cluster in a temporary directory, with the database `database` made on every node and the
 * workers added; or says why it cannot (no tarball, not root, no apt-get).
 */
export async function startCitusCluster(database = 'spaceport'): Promise<CitusCluster | { missing: string }> {
  try {
    await run(BUILD, [CITUS_TARBALL], { timeout: 1_200_000 });
  } catch (error) {
    const { code, stderr } = error as { code?: number; stderr?: string };
    if (code === 3) return { missing: String(stderr).trim() };
    throw new Error(`building Citus failed: ${String(stderr).slice(-2000)}`);
  }
  const directory = scratchFolder('citus');
  const ports = await freePorts(3, 41_000, 9_000);
  const nodes = ports.map((port) => ({ port, data: path.join(directory, `node-${port}`) }));
  const postgres = await run('id', ['-u', 'postgres']).then(({ stdout }) => Number(stdout.trim()));
  chownSync(directory, postgres, postgres);
  // The servers must not read root's HOME: connections between nodes would look for root's client certificate there.
  const asPostgres = (command: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', command, ...args], { env: { PATH: process.env.PATH, HOME: directory, LANG: 'C.UTF-8' }, timeout: 120_000 });
  const started: string[] = [];
  const stop = async () => {
    for (const data of started) await asPostgres(`${BIN}/pg_ctl`, ['-D', data, '-m', 'immediate', 'stop']).catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    await Promise.all(nodes.map(({ port, data }) => initNode(asPostgres, port, data, directory)));
    for (const { data } of nodes) {
      await asPostgres(`${BIN}/pg_ctl`, ['-D', data, '-l', `${data}.log`, '-w', '-t', '120', 'start']);
      started.push(data);
    }
    const query = async <Row extends pg.QueryResultRow>(text: string, values: unknown[] = [], port = ports[0], name = database) => {
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: name });
      await client.connect();
      try {
        return (await client.query<Row>(text, values)).rows;
      } finally {
        await client.end();
      }
    };
    for (const port of ports) {
      await query(`create database ${database}`, [], port, 'postgres');
      await query('create extension citus', [], port);
    }
    const [coordinator = 0, ...workers] = ports;
    await query('select citus_set_coordinator_host($1, $2)', ['127.0.0.1', coordinator]);
    for (const worker of workers) await query('select citus_add_node($1, $2)', ['127.0.0.1', worker]);
    return { url: `postgres://postgres@127.0.0.1:${coordinator}/${database}`, coordinatorPort: coordinator, workerPorts: workers, coordinatorLog: `${nodes[0]?.data}.log`, query, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function initNode(asPostgres: (command: string, args: string[]) => Promise<unknown>, port: number, data: string, directory: string): Promise<void> {
  await asPostgres(`${BIN}/initdb`, ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${directory}'`,
      "shared_preload_libraries = 'citus'",
      'max_connections = 300',
      'max_prepared_transactions = 200',
      'wal_level = logical',
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      "citus.log_remote_commands = off",
      '',
    ].join('\n'),
  );
}

/**
 * A database of its own on `cluster`, laid out as `make distribute` lays it out (a copy of the
 * migrated template on the coordinator, `citus` created on every node, the workers added, then
 * `distributeTables`), with `tenants` created: the world of an isolation property (SPEC §15.4).
 * Its `knex` is the owner's view, which may read and clear every shard; its `tenantDatabase`
 * the service's, in the Citus form of the scope, where a statement on more than one shard
 * fails (`citus.multi_task_query_log_level = 'error'`).
 */
export function distributedDatabase(cluster: CitusCluster, tenants: string[], options: DistributedDatabaseOptions = {}): Promise<MigratedDatabase> {
  // One at a time: nodes added from two databases at once failed ("failure on connection marked as essential").
  const made = creating.then(() => newDistributedDatabase(cluster, tenants, options));
  creating = made.then(
    () => undefined,
    () => undefined,
  );
  return made;
}

let creating: Promise<void> = Promise.resolve();

export interface DistributedDatabaseOptions {
  /**
   * Shards of each table (Citus's default, 32, unless given): 1 puts every tenant's rows in one
   * shard on one worker, where the policies alone keep them apart once the application's tenant
   * condition is left out.
   */
  readonly shardCount?: number;
  /** The URL the service's view uses for the database's own (a pooler's in front of the coordinator), and its pool size. */
  readonly serviceUrl?: (databaseUrl: string) => string;
  readonly poolMax?: number;
}

async function newDistributedDatabase(cluster: CitusCluster, tenants: string[], { shardCount, serviceUrl, poolMax }: DistributedDatabaseOptions): Promise<MigratedDatabase> {
  const fresh = await createMigratedDatabaseOn(cluster.url, 'spaceport_citus');
  const dropEverywhere = () => dropOnEveryNode(cluster, fresh.name);
  let knex: Knex | undefined;
  try {
    for (const port of cluster.workerPorts) await cluster.query(`create database ${fresh.name}`, [], port, 'postgres');
    for (const port of [cluster.coordinatorPort, ...cluster.workerPorts]) await cluster.query('create extension citus', [], port, fresh.name);
    await cluster.query('select citus_set_coordinator_host($1, $2)', ['127.0.0.1', cluster.coordinatorPort], cluster.coordinatorPort, fresh.name);
    for (const port of cluster.workerPorts) await cluster.query('select citus_add_node($1, $2)', ['127.0.0.1', port], cluster.coordinatorPort, fresh.name);
    knex = ownerKnex(fresh.url, shardCount);
    await distributeTables(knex);
    for (const tenant of tenants) await createTenant(knex, tenant);
    await knex.raw(`alter database ${fresh.name} set citus.multi_task_query_log_level = 'error'`);
  } catch (error) {
    await knex?.destroy();
    await dropEverywhere();
    throw error;
  }
  const owner = knex;
  // Opened after the database's settings, which a session takes when it starts.
  const tenantDatabase = testTenantDatabase(serviceUrl?.(fresh.url) ?? fresh.url, { scopeForm: 'citus', poolMax });
  return {
    url: fresh.url,
    knex: owner,
    tenantDatabase,
    close: async () => {
      await tenantDatabase.close();
      await owner.destroy();
      await dropEverywhere();
    },
  };
}

/**
 * Drops a database on the coordinator, then on the workers: the coordinator's own connections to
 * the workers' copy (its maintenance daemon's) end with it. A worker's copy still in use a moment
 * longer is dropped again.
 */
async function dropOnEveryNode(cluster: CitusCluster, name: string): Promise<void> {
  for (const port of [cluster.coordinatorPort, ...cluster.workerPorts]) {
    for (let attempt = 1; ; attempt++) {
      try {
        await cluster.query(`drop database if exists ${name} with (force)`, [], port, 'postgres');
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== '55006' || attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
}

/** The owner's view of a distributed database: its sessions may run statements on every shard, and distribute tables into `shardCount` shards. */
function ownerKnex(url: string, shardCount: number | undefined): Knex {
  const owner = new URL(url);
  owner.searchParams.set('options', `-c citus.multi_task_query_log_level=off${shardCount === undefined ? '' : ` -c citus.shard_count=${shardCount}`}`);
  return createKnex(owner.toString(), { connectTimeoutMs: TEST_CONNECT_TIMEOUT_MS });
}
