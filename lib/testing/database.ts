import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../config/index.ts';
import { openDatabase, type OpenedDatabase } from '../db/open.ts';

export interface FreshDatabase {
  /** `<prefix>_<random>`, so that a stray one can be traced to what made it. */
  readonly name: string;
  readonly url: string;
  /** Drops the database, closing whatever is still connected to it. */
  drop(): Promise<void>;
}

/** Creates an empty database on the server of `serverUrl` and returns its URL. */
export async function createDatabaseOn(serverUrl: string, prefix = 'spaceport_test'): Promise<FreshDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name}`);
  // Test rows need no durability: commits that skip the wait for the disk keep the suites fast.
  await adminQuery(serverUrl, `alter database ${name} set synchronous_commit = off`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`) };
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

/**
 * A fresh database on the server the service would use (`openDatabase`): DATABASE_URL's (what
 * `make test` sets), else the embedded PostgreSQL of DATA_DIR, joined when running, else started
 * until the last fresh database is dropped.
 */
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
