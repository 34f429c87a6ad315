import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { serverUrl } from '../helpers/database.ts';

/** `make bench-compare` is a measurement: these runs prove that it compares two builds, reports, and leaves nothing behind. */
const REPOSITORY = path.resolve(import.meta.dirname, '../..');

/** Small enough to finish in seconds; the figures it prints mean nothing. */
const TINY_RUN = { COMPARE_ROUNDS: '2', COMPARE_SECONDS: '0.3', COMPARE_WARMUP_SECONDS: '0', COMPARE_PROCESSES: '1', COMPARE_ACCOUNTS: '50', BENCH_CONNECTIONS: '2' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `interruptWhen`: one SIGINT once stderr says so (a second one ends a process at once, as Ctrl-C twice does). */
function runCompare(env: Record<string, string>, interruptWhen?: RegExp): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/compare.ts'], { cwd: REPOSITORY, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: serverUrl(), ...env } });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (interrupted || interruptWhen?.test(stderr) !== true) return;
      interrupted = true;
      child.kill('SIGINT');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: REPOSITORY, encoding: 'utf8' }).trim();
}

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    return (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

test('HEAD against this tree: both sides priced per request, their paired difference, and no worktree or database left', async (t) => {
  for (const target of ['account', 'heartbeat']) {
    const run = await runCompare({ ...TINY_RUN, BASE: 'HEAD', COMPARE_TARGET: target });
    t.is(run.code, 0, run.stderr);
    const head = git('rev-parse', '--short=10', 'HEAD');
    t.regex(run.stdout, new RegExp(`^base ${head}\\s+[\\d.]+\\s+[\\d,]+\\s+[\\d.]+$`, 'm'));
    t.regex(run.stdout, new RegExp(`^this tree ${head}( \\+ changes)?\\s+[\\d.]+\\s+[\\d,]+\\s+[\\d.]+$`, 'm'));
    t.regex(run.stdout, /^paired difference \(this tree − base\), CPU µs per request: median -?[\d.]+, middle half -?[\d.]+ to -?[\d.]+$/m);
    t.true(run.stdout.includes(target === 'account' ? 'POST /api/sample/getOneAccount, 2 rounds' : 'GET /api/sample/heartbeat, 2 rounds'), run.stdout);
    const [, worktree, scratch] = /checked out in (\S+); scratch database (spaceport_bench_[0-9a-f]+)/.exec(run.stderr) ?? [];
    t.truthy(worktree, run.stderr);
    t.false(existsSync(worktree ?? ''), `${worktree} is removed`);
    t.false(git('worktree', 'list').includes(worktree ?? '-'), 'git forgets the worktree');
    t.false(await databaseExists(scratch ?? ''), `${scratch} is dropped`);
  }
});

test('interrupted while it measures, it stops its services and removes the worktree and the database', async (t) => {
  const run = await runCompare({ ...TINY_RUN, BASE: 'HEAD', COMPARE_ROUNDS: '50' }, /round 1 of 50/);
  t.is(run.code, 130, run.stderr);
  t.regex(run.stderr, /bench-compare: SIGINT: stopping/);
  const [, worktree, scratch] = /checked out in (\S+); scratch database (spaceport_bench_[0-9a-f]+)/.exec(run.stderr) ?? [];
  t.false(existsSync(worktree ?? ''), `${worktree} is removed`);
  t.false(git('worktree', 'list').includes(worktree ?? '-'), 'git forgets the worktree');
  t.false(await databaseExists(scratch ?? ''), `${scratch} is dropped`);
  t.is(run.stdout, '');
});

test('a revision that does not exist, or with other packages, is refused before anything starts', async (t) => {
  const missing = await runCompare({ ...TINY_RUN, BASE: 'no-such-revision' });
  t.is(missing.code, 1);
  t.is(missing.stderr.trim(), 'bench-compare failed: no such revision: no-such-revision');
  const lockChanged = git('log', '-1', '--format=%H', '--', 'package-lock.json');
  const otherPackages = await runCompare({ ...TINY_RUN, BASE: `${lockChanged}^` });
  t.is(otherPackages.code, 1);
  t.regex(otherPackages.stderr, /differs from this tree in package-lock\.json( and migrations)?: compare revisions that share them/);
  const unnamed = await runCompare({ ...TINY_RUN });
  t.is(unnamed.code, 1);
  t.regex(unnamed.stderr, /BASE: name the revision to compare with: make bench-compare BASE=<revision>/);
  t.is(missing.stdout + otherPackages.stdout + unnamed.stdout, '');
});
