import type { LoadedConfig } from '../config/index.ts';
import { openEmbeddedDatabase } from '../dev/embedded-postgres/index.ts';

export interface OpenedDatabase {
  readonly url: string;
  stop(): Promise<void>;
}

/** The one place that decides which database the service, `make dev` and the tests use: DATABASE_URL, else the embedded one. */
export async function openDatabase({ config, secrets }: LoadedConfig, warn: (line: string) => void): Promise<OpenedDatabase> {
  if (secrets.databaseUrl !== undefined) return { url: secrets.databaseUrl, stop: async () => {} };
  return openEmbeddedDatabase(config.dataDir, warn);
}
