import test from 'ava';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { databaseExists, serverUrl } from '../helpers/database.ts';

/** `make bench-compare` is a measurement: these runs prove that it compares two builds, reports, and leaves nothing behind. */
const REPOSITORY = path.resolve(import.meta.dirname, '../..');

/** Small enough to finish in seconds; the figures it prints mean nothing. */
const TINY_RUN = {
  COMPARE_ROUNDS: '2',
  COMPARE_ROUNDS_PER_START: '1',
  COMPARE_SECONDS: '0.3',
  COMPARE_WARMUP_SECONDS: '0',
  COMPARE_START_WARMUP_SECONDS: '0.2',
  COMPARE_PROCESSES: '1',
  COMPARE_ACCOUNTS: '50',
  BENCH_CONNECTIONS: '2',
};

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `interruptWhen`: SIGINT once stderr says so, and again a moment later, as an impatient Ctrl-C twice. */
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
      setTimeout(() => child.kill('SIGINT'), 100);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: REPOSITORY, encoding: 'utf8' }).trim();
}

/** Whether no process's command line holds `text` within 5 s (one killed as the run exits takes a moment to go). */
async function noneLeft(text: string): Promise<boolean> {
  for (let waited = 0; waited < 5000; waited += 100) {
    if (spawnSync('pgrep', ['-f', text]).status === 1) return true;
    await delay(100);
  }
  return false;
}

test('HEAD against this tree, on each target: both sides priced per request, their paired difference, and no worktree or database left', async (t) => {
  const requests = { account: 'POST /api/sample/getOneAccount', heartbeat: 'GET /api/sample/heartbeat', 'new-token': 'GET /api/benchmark/private with a system JWT' };
  for (const [target, request] of Object.entries(requests)) {
    const run = await runCompare({ ...TINY_RUN, BASE: 'HEAD', COMPARE_TARGET: target });
    t.is(run.code, 0, run.stderr);
    const head = git('rev-parse', '--short=10', 'HEAD');
    t.regex(run.stdout, new RegExp(`^base ${head}\\s+[\\d.]+\\s+[\\d,]+\\s+[\\d.]+ to [\\d.]+$`, 'm'));
    t.regex(run.stdout, new RegExp(`^this tree ${head}( \\+ changes)?\\s+[\\d.]+\\s+[\\d,]+\\s+[\\d.]+ to [\\d.]+$`, 'm'));
    t.regex(run.stdout, /^paired difference \(this tree − base\), CPU µs per request of the service's process: median -?[\d.]+, middle half -?[\d.]+ to -?[\d.]+$/m);
    // Started afresh for each round: two processes a side in all.
    t.true(run.stdout.includes(request), run.stdout);
    t.true(run.stdout.includes(`, 2 rounds of 0.3 s (after 0 s of warm-up), 1 process(es) a side started afresh every 1 rounds (2 a side in all)`), run.stdout);
    const [, worktree, scratch] = /checked out in (\S+); scratch database (spaceport_bench_[0-9a-f]+)/.exec(run.stderr) ?? [];
    t.truthy(worktree, run.stderr);
    t.false(existsSync(worktree ?? ''), `${worktree} is removed`);
    t.false(git('worktree', 'list').includes(worktree ?? '-'), 'git forgets the worktree');
    t.false(await databaseExists(scratch ?? ''), `${scratch} is dropped`);
  }
});

test('interrupted twice while it measures, it still stops its services and removes the worktree and the database', async (t) => {
  const run = await runCompare({ ...TINY_RUN, BASE: 'HEAD', COMPARE_ROUNDS: '50' }, /round 1 of 50/);
  t.is(run.code, 130, run.stderr);
  t.regex(run.stderr, /bench-compare: SIGINT: stopping\n(.*\n)*bench-compare: SIGINT: already stopping, cleaning up/);
  t.true(await noneLeft('spaceport-compare-'), 'no service of the base is left running');
  const [, worktree, scratch] = /checked out in (\S+); scratch database (spaceport_bench_[0-9a-f]+)/.exec(run.stderr) ?? [];
  t.false(existsSync(worktree ?? ''), `${worktree} is removed`);
  t.false(git('worktree', 'list').includes(worktree ?? '-'), 'git forgets the worktree');
  t.false(await databaseExists(scratch ?? ''), `${scratch} is dropped`);
  t.is(run.stdout, '');
});

test('a revision that does not exist, or with other packages or migrations, is refused before anything starts', async (t) => {
  const missing = await runCompare({ ...TINY_RUN, BASE: 'no-such-revision' });
  t.is(missing.code, 1);
  t.is(missing.stderr.trim(), 'bench-compare failed: no such revision: no-such-revision');
  const lockChanged = git('log', '-1', '--format=%H', '--', 'package-lock.json');
  const otherPackages = await runCompare({ ...TINY_RUN, BASE: `${lockChanged}^` });
  t.is(otherPackages.code, 1);
  t.regex(otherPackages.stderr, /differs from this tree in package-lock\.json( and migrations)?: compare revisions that share them/);
  // A migration this tree has and BASE has not, even one git does not track yet.
  const probe = path.join(REPOSITORY, 'migrations/.bench-compare-probe');
  writeFileSync(probe, '');
  t.teardown(() => rmSync(probe, { force: true }));
  const newMigration = await runCompare({ ...TINY_RUN, BASE: 'HEAD' });
  rmSync(probe);
  t.is(newMigration.code, 1);
  t.is(newMigration.stderr.trim(), 'bench-compare failed: HEAD differs from this tree in migrations: compare revisions that share them');
  const unnamed = await runCompare({ ...TINY_RUN });
  t.is(unnamed.code, 1);
  t.regex(unnamed.stderr, /BASE: name the revision to compare with: make bench-compare BASE=<revision>/);
  t.is(missing.stdout + otherPackages.stdout + newMigration.stdout + unnamed.stdout, '');
});
