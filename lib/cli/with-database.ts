import { spawn } from 'node:child_process';
import { loadConfig } from '../config/index.ts';
import { openDatabase } from '../db/open.ts';

/** `with-database.ts -- command args...`: runs the command with DATABASE_URL set to the service's database. */
async function main(): Promise<number> {
  const separator = process.argv.indexOf('--');
  const [command, ...args] = process.argv.slice(separator + 1);
  if (separator === -1 || command === undefined) {
    process.stderr.write('usage: with-database.ts -- command [args...]\n');
    return 2;
  }
  const database = await openDatabase(loadConfig(), (line) => process.stderr.write(`${line}\n`));
  try {
    return await run(command, args, { ...process.env, DATABASE_URL: database.url });
  } finally {
    await database.stop();
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
