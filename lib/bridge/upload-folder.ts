import { rmSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

let processFolder: Promise<string> | undefined;

/**
 * `chosen`, or a folder of this process's own in the OS temp folder: uploads are tenants' data,
 * and a fixed shared name there could be read, or made beforehand, by any local user.
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
