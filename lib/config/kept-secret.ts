import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Made once, owner-readable; linked into place whole from a draft, so processes starting at once agree on one secret. */
export function keptSecret(file: string, bytes: number): string {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, `${randomBytes(bytes).toString('base64url')}\n`, { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  return readFileSync(file, 'utf8').trim();
}
