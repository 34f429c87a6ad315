import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The embedded server's superuser password, made once and kept in `<dataDir>/postgres-password`
 * (mode 600). Written whole to a draft and linked into place, so processes starting at once
 * agree on one password.
 */
export function embeddedPassword(dataDir: string): string {
  const file = path.join(dataDir, 'postgres-password');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  const password = readFileSync(file, 'utf8').trim();
  if (password === '') throw new Error(`embedded PostgreSQL: ${file} is empty; restore it, or delete it together with ${path.join(dataDir, 'postgres')} to start afresh`);
  return password;
}
