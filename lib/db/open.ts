import type { LoadedConfig } from '../config/index.ts';
import { openEmbeddedDatabase } from '../dev/embedded-postgres/index.ts';

/** The database a process uses, and how it lets go of it. */
export interface OpenedDatabase {
  readonly url: string;
  /** Releases the embedded server (see `openEmbeddedDatabase`); nothing to do for DATABASE_URL. */
  stop(): Promise<void>;
}

/**
 * The one place that decides which database the service, `make dev` and the tests use:
 * DATABASE_URL when it is set, else the embedded PostgreSQL under DATA_DIR (joined when a
 * running service holds it, started otherwise). `warn` gets the embedded server's log lines.
 */
export async function openDatabase({ config, secrets }: LoadedConfig, warn: (line: string) => void): Promise<OpenedDatabase> {
  if (secrets.databaseUrl !== undefined) return { url: secrets.databaseUrl, stop: async () => {} };
  return openEmbeddedDatabase(config.dataDir, warn);
}
