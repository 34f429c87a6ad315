import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const REPOSITORY = path.resolve(import.meta.dirname, '../..');

/** What must be the same in both for their processes to differ by the code alone. */
const SHARED = ['package-lock.json', 'migrations'];

/** Another revision of this repository, checked out beside it, sharing its packages. */
export interface CheckedOutRevision {
  /** The commit, abbreviated. */
  readonly commit: string;
  readonly root: string;
  remove(): void;
}

/**
 * Checks `revision` out into a temporary worktree whose `node_modules` is this checkout's; `remove` removes it, and is
 * safe to call again. Refused when its package
 * lock or its migrations differ from this tree's: its processes would then run other packages, or refuse a database
 * this tree migrated.
 */
export function checkOutRevision(revision: string): CheckedOutRevision {
  const commit = commitOf(revision);
  const differing = SHARED.filter((shared) => !sameAsThisTree(commit, shared));
  if (differing.length > 0) throw new Error(`${revision} differs from this tree in ${differing.join(' and ')}: compare revisions that share them`);
  const parent = mkdtempSync(path.join(tmpdir(), 'spaceport-compare-'));
  const root = path.join(parent, 'base');
  const remove = () => {
    try {
      if (existsSync(root)) git('worktree', 'remove', '--force', root);
    } finally {
      rmSync(parent, { recursive: true, force: true });
      git('worktree', 'prune');
    }
  };
  try {
    git('worktree', 'add', '--detach', root, commit);
    symlinkSync(path.join(REPOSITORY, 'node_modules'), path.join(root, 'node_modules'));
  } catch (error) {
    remove();
    throw error;
  }
  return { commit: commit.slice(0, 10), root, remove };
}

/** This tree's abbreviated commit, with `+ changes` when its files differ from it (new files git does not ignore included). */
export function describeThisTree(): string {
  const commit = git('rev-parse', '--short=10', 'HEAD').trim();
  return git('status', '--porcelain').trim() === '' ? commit : `${commit} + changes`;
}

function commitOf(revision: string): string {
  try {
    return git('rev-parse', '--verify', '--quiet', `${revision}^{commit}`).trim();
  } catch {
    throw new Error(`no such revision: ${revision}`);
  }
}

/** The same files, new ones git does not ignore included (a migration not yet added is one this tree's database runs). */
function sameAsThisTree(commit: string, shared: string): boolean {
  try {
    git('diff', '--quiet', commit, '--', shared);
  } catch {
    return false;
  }
  return git('ls-files', '--others', '--exclude-standard', '--', shared).trim() === '';
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: REPOSITORY, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
