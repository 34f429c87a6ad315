import path from 'node:path';
import { loadConfig } from '../config/index.ts';
import { runMain } from '../process/run-main.ts';
import { openDatabase } from '../db/open.ts';
import { displayPath } from '../projects/problems.ts';
import { DevFront } from './dev/front.ts';
import { createDevLog } from './dev/log-lines.ts';
import { START_LIMIT_MS, Supervisor } from './dev/supervisor.ts';
import { watchFiles } from './dev/watch.ts';

const LIB_DIR = path.resolve(import.meta.dirname, '..');

/**
 * `make dev`: the service on PORT, restarted on every change without a failed request: the
 * supervisor holds the port and switches to a new instance once it listens (`dev/front.ts`). The
 * embedded database, when used, is the supervisor's, so it outlives every instance.
 */
async function main(): Promise<void> {
  const startLimit = startLimitMs();
  const { logger, writeInstanceLine } = createDevLog();
  const loaded = loadConfig();
  const { config } = loaded;
  const database = await openDatabase(loaded, (line) => logger.warn(line));
  const env = { ...process.env, DATABASE_URL: database.url };
  const front = new DevFront();
  const url = await front.listen(config.port, config.host);
  const supervisor = new Supervisor({ front, env, logger, writeLog: writeInstanceLine, startLimitMs: startLimit });
  const expertFile = path.resolve(process.env.EXPERT_CONFIG || 'config/expert.json');
  const watcher = watchFiles([LIB_DIR, config.projectsDir, expertFile], (changed) => void supervisor.reload(changed));
  const stop = async () => {
    logger.info('stopping');
    await watcher.close();
    await Promise.all([front.close(), supervisor.stop()]);
    await database.stop();
    process.exit(0);
  };
  // Before the line that says make dev is up: whoever reads it may signal at once, and a signal
  // that comes before its handler ends the process outright, leaving the database running.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop());
  logger.info(`make dev on ${url}: watching lib/, ${displayPath(config.projectsDir)} and the expert configuration`);
  void supervisor.reload();
}

/** `DEV_START_LIMIT_MS`, for tests only (`test/cli/dev.heavy.test.ts`), shortens `START_LIMIT_MS`. */
function startLimitMs(): number {
  const given = process.env.DEV_START_LIMIT_MS;
  if (given === undefined || given === '') return START_LIMIT_MS;
  if (!/^[1-9]\d*$/.test(given)) throw new Error(`DEV_START_LIMIT_MS must be a number of milliseconds, not "${given}"`);
  return Number(given);
}

runMain(main, 'make dev failed');
