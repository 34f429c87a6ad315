import path from 'node:path';
import { keptSecret } from '../../config/kept-secret.ts';

/** The embedded server's superuser password, made once and kept in `<dataDir>/postgres-password` (`keptSecret`). */
export function embeddedPassword(dataDir: string): string {
  const file = path.join(dataDir, 'postgres-password');
  const password = keptSecret(file, 24);
  if (password === '') throw new Error(`embedded PostgreSQL: ${file} is empty; restore it, or delete it together with ${path.join(dataDir, 'postgres')} to start afresh`);
  return password;
}
