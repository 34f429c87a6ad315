import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** Longest socket path every platform takes (Linux allows 107 bytes, macOS 103). */
const SOCKET_PATH_LIMIT = 100;
const STALE_LOCK_MS = 10_000;

/** In the data folder, so only who may use it may reach the keeper or pose as it (an abstract socket would let any local user). */
export function keeperSocketPath(dataDir: string): string {
  const inDataDir = path.join(dataDir, 'postgres-keeper.sock');
  if (Buffer.byteLength(inDataDir) <= SOCKET_PATH_LIMIT) return inDataDir;
  const id = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 24);
  return path.join(privateRuntimeFolder(), `postgres-keeper-${id}.sock`);
}

/** `$XDG_RUNTIME_DIR`, else `<tmp>/spaceport-<uid>`, which must be ours and closed to others. */
function privateRuntimeFolder(): string {
  if (process.env.XDG_RUNTIME_DIR) return process.env.XDG_RUNTIME_DIR;
  const folder = path.join(tmpdir(), `spaceport-${process.getuid?.() ?? 0}`);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const stat = lstatSync(folder);
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0) {
    throw new Error(`embedded PostgreSQL: ${folder} must be a folder of ours that no one else may enter; remove it, or use a shorter DATA_DIR`);
  }
  return folder;
}

/** Undefined when a live keeper listens; a killed keeper's socket file is removed under a lock, so two keepers never both listen. */
export async function listenAlone(socketPath: string): Promise<Server | undefined> {
  for (;;) {
    const server = await listenOn(socketPath);
    if (server) return server;
    if (await answers(socketPath)) return undefined;
    const lock = `${socketPath}.lock`;
    if (!takeLock(lock)) {
      await delay(50);
      continue;
    }
    try {
      if (await answers(socketPath)) return undefined;
      unlinkSync(socketPath);
      const taken = await listenOn(socketPath);
      if (taken) return taken;
    } finally {
      rmdirSync(lock);
    }
  }
}

function listenOn(socketPath: string): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(undefined) : reject(error)));
    server.listen(socketPath, () => {
      chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}

function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** `mkdir` is atomic: one process gets the lock; one left by a killed process is broken after 10 s. */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmdirSync(lock);
    } catch {
      // taken and released meanwhile
    }
    return false;
  }
}
