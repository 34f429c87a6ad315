import { rmSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rename, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { File as FormidableFile } from 'formidable';

/** One uploaded file, in the shape express-fileupload gives with temporary files on. */
export interface UploadedFile {
  /** The client's file name reduced to a base name: no directory part, never `.` or `..`. */
  readonly name: string;
  /** Always empty: the content is in `tempFilePath`. */
  readonly data: Buffer;
  readonly size: number;
  readonly encoding: string;
  readonly tempFilePath: string;
  readonly truncated: boolean;
  readonly mimetype: string;
  /** Hex MD5 of the content. */
  readonly md5: string;
  /** Moves the file to `destination`; a promise without a callback. */
  mv(destination: string): Promise<void>;
  mv(destination: string, callback: (error?: Error) => void): void;
}

export type UploadedFiles = Record<string, UploadedFile | UploadedFile[]>;

/** Field names express-fileupload leaves out of `req.files` and `req.body`, for they would reach or hide a prototype member. */
export const OBJECT_PROTOTYPE_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** Several files of one field are an array, in upload order; no prototype, as express-fileupload does. */
export function uploadsOf(stored: ReadonlyArray<readonly [field: string, file: FormidableFile]>): UploadedFiles | null {
  if (stored.length === 0) return null;
  const files: UploadedFiles = Object.create(null);
  for (const [field, each] of stored) {
    if (OBJECT_PROTOTYPE_KEYS.has(field)) continue;
    const file = uploadedFile(each);
    const earlier = files[field];
    files[field] = earlier === undefined ? file : Array.isArray(earlier) ? [...earlier, file] : [earlier, file];
  }
  return files;
}

function uploadedFile(stored: FormidableFile): UploadedFile {
  const move = (destination: string) => moveFile(stored.filepath, destination);
  function mv(destination: string): Promise<void>;
  function mv(destination: string, callback: (error?: Error) => void): void;
  function mv(destination: string, callback?: (error?: Error) => void): Promise<void> | void {
    if (!callback) return move(destination);
    move(destination).then(() => callback(), (error: Error) => callback(error));
  }
  return Object.freeze({
    name: baseName(stored.originalFilename ?? ''),
    data: Buffer.alloc(0),
    size: stored.size,
    encoding: '7bit',
    tempFilePath: stored.filepath,
    truncated: false,
    mimetype: stored.mimetype ?? 'application/octet-stream',
    md5: typeof stored.hash === 'string' ? stored.hash : '',
    mv,
  });
}

/** A client name such as `../../x` or `C:\dir\x` keeps only its last segment. */
function baseName(clientName: string): string {
  const last = clientName.split(/[/\\]/).pop() ?? '';
  return last === '.' || last === '..' ? '' : last;
}

/** Rename where possible; across file systems, copy then remove the temporary file. */
async function moveFile(source: string, destination: string): Promise<void> {
  try {
    await rename(source, destination);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(source, destination);
    await unlink(source);
  }
}

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
