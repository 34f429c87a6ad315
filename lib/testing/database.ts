import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { loadConfig } from '../config/index.ts';
import { createKnex } from '../db/connect.ts';
import { listMigrations } from '../db/migration-files.ts';
import { migrateLatest } from '../db/migrations.ts';
import { openDatabase, type OpenedDatabase } from '../db/open.ts';

/**
 * How long a tenant's statement over its share waits in a test, unless the test says (`limits.queueMs`): for the
 * services `start` makes and the service's own tests' pools alike. Tests of the share set their own.
 */
export const TEST_QUEUE_MS = 30_000;

export interface FreshDatabase {
  /** `<prefix>_<random>`, so that a stray one can be traced to what made it. */
  readonly name: string;
  readonly url: string;
  /** Drops the database, closing whatever is still connected to it. */
  drop(): Promise<void>;
}

/** An empty database on `serverUrl`'s server, or a copy of `template` (to which nobody is connected). */
export async function createDatabaseOn(serverUrl: string, prefix = 'spaceport_test', template?: string): Promise<FreshDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, template === undefined ? `create database ${name}` : `create database ${name} template ${template}`);
  // Test rows need no durability: commits that skip the wait for the disk keep the suites fast.
  await adminQuery(serverUrl, `alter database ${name} set synchronous_commit = off`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`) };
}

/** A copy of a template migrated once per set of migration files: far faster than running them. */
export async function createMigratedDatabaseOn(serverUrl: string, prefix = 'spaceport_test'): Promise<FreshDatabase> {
  return createDatabaseOn(serverUrl, prefix, await migratedTemplate(serverUrl));
}

/** The template is built once, maybe on a machine busy with a whole suite: its connection may take a while. */
const TEMPLATE_CONNECT_TIMEOUT_MS = 10_000;

/** An arbitrary key of the server-wide advisory lock under which one process builds a template. */
const TEMPLATE_LOCK = 7_302_114_502;

/** `spaceport_template_<hash of the migration files>`, built on first use by whichever process comes first. */
async function migratedTemplate(serverUrl: string): Promise<string> {
  const name = `spaceport_template_${migrationsHash()}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const exists = async () => (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
    if (await exists()) return name;
    await client.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    if (!(await exists())) await buildTemplate(serverUrl, client, name);
    return name;
  } finally {
    await client.end();
  }
}

/** Migrates a database under another name, then renames it: a template is never seen half built. */
async function buildTemplate(serverUrl: string, client: pg.Client, name: string): Promise<void> {
  const building = `${name}_building`;
  await client.query(`drop database if exists ${building} with (force)`);
  await client.query(`create database ${building}`);
  const url = new URL(serverUrl);
  url.pathname = `/${building}`;
  const knex = createKnex(url.toString(), { connectTimeoutMs: TEMPLATE_CONNECT_TIMEOUT_MS });
  try {
    await migrateLatest(knex);
  } finally {
    await knex.destroy();
  }
  await client.query(`alter database ${building} rename to ${name}`);
}

function migrationsHash(): string {
  const hash = createHash('sha256');
  // Both kinds: a contract migration changes what a new database holds too.
  for (const file of listMigrations()) hash.update(file.name).update(readFileSync(file.path));
  return hash.digest('hex').slice(0, 16);
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let server: Promise<OpenedDatabase> | undefined;
let serverUsers = 0;

/** On the server the service would use (`openDatabase`); an embedded one started here stops with the last drop. */
export async function freshTestDatabase(): Promise<FreshDatabase> {
  serverUsers++;
  server ??= openDatabase(loadConfig(), () => {});
  const database = await createDatabaseOn((await server).url);
  return {
    name: database.name,
    url: database.url,
    drop: async () => {
      await database.drop();
      if (--serverUsers === 0 && server !== undefined) {
        const opened = await server;
        server = undefined;
        await opened.stop();
      }
    },
  };
}
