import path from 'node:path';
import { createDatabaseOn, type FreshDatabase } from '../../lib/testing/database.ts';

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
  let database: FreshDatabase;
  try {
    database = await createDatabaseOn(server.url, 'spaceport_bench');
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    name: database.name,
    url: database.url,
    drop: async () => {
      try {
        await database.drop();
      } finally {
        await server.stop();
      }
    },
  };
}

/** Loaded only when needed: the embedded server is started only for a run without DATABASE_URL. */
async function databaseServer(env: NodeJS.ProcessEnv): Promise<DatabaseServer> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, stop: async () => {} };
  const { openEmbeddedDatabase } = await import('../../lib/db/embedded/index.ts');
  return openEmbeddedDatabase(path.resolve(env.DATA_DIR ?? './.data'));
}
