import { execFile } from 'node:child_process';
import path from 'node:path';
import { TEST_JWT_SECRET } from './service.ts';
import { scratchFolder } from './scratch.ts';

export interface CommandOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(ROOT, 'node_modules/.bin/node');
const dataDir = scratchFolder('cli');

function run(file: string, args: string[], databaseUrl: string, extraEnv: Record<string, string>): Promise<CommandOutcome> {
  // A make run inside `make test` would otherwise inherit the outer make's level and flags.
  const { MAKEFLAGS: _flags, MAKELEVEL: _level, MFLAGS: _mflags, ...outer } = process.env;
  const env = { ...outer, DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: dataDir, PATH: `${path.dirname(NODE)}:${process.env.PATH ?? ''}`, ...extraEnv };
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `lib/cli/main.ts <args>` as the npm scripts do. */
export function cli(args: string[], databaseUrl: string, env: Record<string, string> = {}): Promise<CommandOutcome> {
  return run(NODE, ['lib/cli/main.ts', ...args], databaseUrl, env);
}

/** Runs a make target; `-o` keeps make from reinstalling packages while other tests run. */
export function make(args: string[], databaseUrl: string, env: Record<string, string> = {}): Promise<CommandOutcome> {
  return run('make', ['--no-print-directory', '-o', 'node_modules/.install-stamp', ...args], databaseUrl, env);
}
