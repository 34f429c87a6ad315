import { execFileSync } from 'node:child_process';
import { realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';

export interface ServerAccount {
  readonly uid: number;
  readonly gid: number;
  /** True when that is not us: as root, the `postgres` system user (PostgreSQL refuses to run as root). */
  readonly switched: boolean;
}

export function serverAccount(): ServerAccount {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  if (uid !== 0) return { uid, gid, switched: false };
  return { ...systemUser('postgres'), switched: true };
}

/** The ids of the system user `name`, which is created (with a group of the same name) if missing. */
export function systemUser(name: string): { uid: number; gid: number } {
  if (!succeeds('id', ['-u', name])) createSystemUser(name);
  return { uid: Number(id(['-u', name])), gid: Number(id(['-g', name])) };
}

function createSystemUser(name: string): void {
  const group = succeeds('getent', ['group', name]) ? ['--gid', name] : ['--user-group'];
  try {
    execFileSync('useradd', ['--system', ...group, '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', name], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const reason = firstLine((error as { stderr?: Buffer }).stderr?.toString() || (error as Error).message);
    throw new Error(`embedded PostgreSQL: as root it runs as the "${name}" system user, which is missing and could not be created (${reason}): create it with \`useradd --system ${name}\`, run as another user, or set DATABASE_URL`);
  }
}

function succeeds(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function id(args: string[]): string {
  return execFileSync('id', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

/** The first folder down to `target`'s parent that `account` may not enter; ACLs are not read, so it may call closed a folder an ACL opens, never the reverse. */
export function closedFolderOnTheWay(target: string, account: ServerAccount): string | undefined {
  if (account.uid === 0) return undefined;
  const parent = realpathSync(path.dirname(path.resolve(target)));
  for (const folder of foldersDownTo(parent)) {
    if (!maySearch(statSync(folder), account)) return folder;
  }
  return undefined;
}

function foldersDownTo(folder: string): string[] {
  const parent = path.dirname(folder);
  return parent === folder ? [folder] : [...foldersDownTo(parent), folder];
}

function maySearch(stat: Stats, account: ServerAccount): boolean {
  const bit = stat.uid === account.uid ? 0o100 : stat.gid === account.gid ? 0o010 : 0o001;
  return (stat.mode & bit) !== 0;
}
