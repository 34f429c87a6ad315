import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import test from 'ava';
import { SHARED_FOLDER } from '../../lib/dev/embedded-postgres/places.ts';
import { embeddedEnvironment, killLeftovers, listeningUrl, postmasterPid, processesMentioning, processGone, removeDataDir, until } from '../helpers/embedded.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * Issue 12, point 6: a clone in a folder only its owner may enter (as root: the `postgres` user
 * cannot reach the binaries nor the data there), with no DATABASE_URL: `make run` serves, a make
 * target joins it, the test runner's path works, SIGTERM exits 0 and leaves no server running.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

const privateFolder = scratchFolder('private');
const clone = path.join(privateFolder, 'spaceport');
const dataDir = path.join(clone, '.data');
test.after.always(() => {
  killLeftovers(dataDir);
  removeDataDir(dataDir);
  removeDataDir(privateFolder);
});

/** The clone's environment: the embedded database, its own ./.data, a generated JWT secret. */
function cloneEnvironment(): NodeJS.ProcessEnv {
  const { DATA_DIR: _dataDir, JWT_SECRET: _secret, ...env } = embeddedEnvironment(dataDir);
  return env;
}

async function cloneRepository(): Promise<void> {
  await run('git', ['clone', '--quiet', ROOT, clone]);
  await run('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules')]);
  // The install stamp is older than the fresh checkout: make would reinstall everything.
  for (const file of ['package.json', 'package-lock.json']) utimesSync(path.join(clone, file), 0, 0);
}

/** The process running `lib/main.ts` under `make run`: SIGTERM goes to it, as a supervisor sends it. */
function serviceUnder(makePid: number): number | undefined {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    const parent = parentOf(entry);
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const queue = [makePid];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    if (pid !== makePid && commandLine(pid).includes('lib/main.ts')) return pid;
    queue.push(...(children.get(pid) ?? []));
  }
  return undefined;
}

function parentOf(pid: string): number | undefined {
  try {
    return Number(/^\d+ \(.*\) \S+ (\d+)/s.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

test.serial('make run as root in a 0700 folder: serves, joins, tests, and stops its PostgreSQL on SIGTERM', async (t) => {
  t.timeout(180_000);
  t.is(statSync(privateFolder).mode & 0o777, 0o700);
  await cloneRepository();

  const make = spawn('make', ['--no-print-directory', 'run'], { cwd: clone, env: cloneEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(make, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  t.teardown(() => {
    if (make.exitCode === null) make.kill('SIGKILL');
  });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    for (const stream of [make.stdout, make.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        const listening = listeningUrl(line);
        if (listening) resolve(listening);
      });
    }
    exited.then(([code]) => reject(new Error(`make run exited with ${code}:\n${lines.join('\n')}`)));
  });
  t.is((await fetch(`${url}/healthz`)).status, 200);
  t.false(lines.some((line) => /EACCES|^\s+at /.test(line)), lines.join('\n'));
  if (process.getuid?.() === 0) {
    t.true(lstatSync(path.join(dataDir, 'postgres')).isSymbolicLink(), '.data/postgres links to the data the postgres user can reach');
    t.true(realpathSync(path.join(dataDir, 'postgres')).startsWith(`${SHARED_FOLDER}/`));
  }

  const joined = await run('make', ['--no-print-directory', 'tenant', 'NAME=acme'], { cwd: clone, env: cloneEnvironment() });
  t.regex(joined.stdout, /acme/);
  const tested = await run(path.join(clone, 'node_modules/.bin/node'), ['lib/cli/with-database.ts', '--', 'node_modules/.bin/ava', 'test/db/migrations.test.ts'], {
    cwd: clone,
    env: { ...cloneEnvironment(), PATH: `${path.join(clone, 'node_modules/.bin')}:${process.env.PATH ?? ''}` },
  });
  t.regex(tested.stdout + tested.stderr, /\d+ tests? passed/);

  const server = postmasterPid(dataDir);
  const service = serviceUnder(make.pid ?? 0);
  if (server === undefined || service === undefined) return t.fail('no server or no service process found');
  process.kill(service, 'SIGTERM');
  t.deepEqual(await exited, [0, null], lines.join('\n'));
  t.true(processGone(server), 'PostgreSQL stopped before the service exited');
  t.true(await until(() => processesMentioning(dataDir).length === 0, 5000), 'nothing is left running on the data folder');
});
