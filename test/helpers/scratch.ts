import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Folders the tests write into: new and private (mode 0700) under `$TMPDIR`, named
 * `spaceport-<name>-XXXXXX`, and removed when the test process ends (ava runs each test file in
 * its own process), so that a run leaves nothing behind.
 */
const made = new Set<string>();
process.on('exit', () => {
  for (const folder of made) removeScratch(folder);
});

export function scratchFolder(name: string, parent = tmpdir()): string {
  const folder = mkdtempSync(path.join(parent, `spaceport-${name}-`));
  made.add(folder);
  return folder;
}

/** Removes a scratch folder now, for a test that is done with it before its process ends. */
export function removeScratch(folder: string): void {
  made.delete(folder);
  try {
    rmSync(folder, { recursive: true, force: true });
  } catch {
    // A folder a test left unreadable on purpose stays; nothing else is lost by that.
  }
}
