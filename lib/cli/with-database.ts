import { spawn } from 'node:child_process';
import path from 'node:path';
import { openEmbeddedDatabase } from '../db/embedded/index.ts';

/**
 * `with-database.ts -- command args...`: runs the command with DATABASE_URL set, using the
 * embedded PostgreSQL when DATABASE_URL is not given (started for the command if not running).
 */
async function main(): Promise<number> {
  const separator = process.argv.indexOf('--');
  const [command, ...args] = process.argv.slice(separator + 1);
  if (separator === -1 || command === undefined) {
    process.stderr.write('usage: with-database.ts -- command [args...]\n');
    return 2;
  }
  let stop = async (): Promise<void> => {};
  const env = { ...process.env };
  if (!env.DATABASE_URL) {
    const embedded = await openEmbeddedDatabase(path.resolve(env.DATA_DIR || './.data'), (line) => process.stderr.write(`${line}\n`));
    env.DATABASE_URL = embedded.url;
    stop = () => embedded.stop();
  }
  try {
    return await run(command, args, env);
  } finally {
    await stop();
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
    child.on('error', (error) => {
      process.stderr.write(`${command}: ${error.message}\n`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`database: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
