import { rmSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

let processFolder: Promise<string> | undefined;

/**
 * Where uploads wait until their response ends: `chosen`, or else a folder of this process's
 * own in the OS temp folder. Uploads are tenants' data: a fixed, shared name there would be
 * readable by any local user (or made beforehand by one), so the folder is new for each
 * process, readable by its owner only, and removed when the process exits.
 */
export function uploadFolder(chosen: string | undefined): Promise<string> {
  if (chosen !== undefined) return mkdir(chosen, { recursive: true, mode: 0o700 }).then(() => chosen);
  processFolder ??= mkdtemp(path.join(tmpdir(), 'spaceport-uploads-')).then(
    (folder) => {
      process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
      return folder;
    },
    (error: unknown) => {
      processFolder = undefined;
      throw error;
    },
  );
  return processFolder;
}
