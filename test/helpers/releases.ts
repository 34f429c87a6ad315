import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { REPOSITORY } from './migrations.ts';
import { scratchFolder } from './scratch.ts';

/**
 * A release made by a test: a copy of the checkout as it is (its tracked and new files, so work
 * not yet committed is part of it) with `files` (path in the checkout → content) written over it,
 * and the checkout's node_modules linked. Removed after the test.
 */
export function makeRelease(t: ExecutionContext, files: Record<string, string>): string {
  const folder = scratchFolder('release');
  t.teardown(() => rmSync(folder, { recursive: true, force: true }));
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPOSITORY, encoding: 'utf8' });
  for (const file of listed.split('\0')) {
    if (file === '' || !existsSync(path.join(REPOSITORY, file))) continue;
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    copyFileSync(path.join(REPOSITORY, file), path.join(folder, file));
  }
  symlinkSync(path.join(REPOSITORY, 'node_modules'), path.join(folder, 'node_modules'));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    writeFileSync(path.join(folder, file), content);
  }
  return folder;
}
