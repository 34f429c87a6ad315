import { loadConfig } from '../../lib/config/index.ts';
import { openDatabase } from '../../lib/db/open.ts';
import { createDatabaseOn, type FreshDatabase } from '../../lib/testing/database.ts';

/** A database made for one bench run on the run's PostgreSQL server, dropped at the end. */
export interface ScratchDatabase {
  /** `spaceport_bench_<random>`: named in the progress lines, so a stray one can be traced to its run. */
  readonly name: string;
  readonly url: string;
  /** Drops the database, and stops the embedded server if this run started it. */
  drop(): Promise<void>;
}

/**
 * Creates `spaceport_bench_<random>` on the server of DATABASE_URL or, when it is unset, on the
 * embedded PostgreSQL that `make run` uses (started for the run if it is not running).
 */
export async function openScratchDatabase(env: NodeJS.ProcessEnv = process.env): Promise<ScratchDatabase> {
  const server = await openDatabase(loadConfig({ env }), () => {});
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
