import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_DATABASE, type HolderMessage, type KeeperMessage, type KeeperReport, onMessages, send } from './lease.ts';
import { keeperSocketPath } from './keeper-socket.ts';
import { embeddedPassword } from './password.ts';

export interface EmbeddedDatabase {
  readonly url: string;
  /** Lets go of the server: the last process to let go (or to die) has it stopped, the others leave it running. */
  stop(): Promise<void>;
}

type Log = (line: string) => void;

const KEEPER = fileURLToPath(new URL('./keeper.ts', import.meta.url));
const START_LIMIT_MS = 120_000;
/** What the keeper needs of our environment: never the secrets a service may be given there. */
const KEEPER_ENVIRONMENT = ['PATH', 'TZ', 'LANG', 'TMPDIR', 'XDG_RUNTIME_DIR'];

/** Joins the server of `dataDir`'s keeper, or starts one; a process killed outright lets go too, so the server never outlives the last. */
export async function openEmbeddedDatabase(dataDir: string, log: Log = () => {}): Promise<EmbeddedDatabase> {
  mkdirSync(dataDir, { recursive: true });
  const password = embeddedPassword(dataDir);
  const lease = await acquireLease(dataDir, log);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${lease.port}/${EMBEDDED_DATABASE}`,
    stop: () => lease.release(),
  };
}

async function acquireLease(dataDir: string, log: Log): Promise<Lease> {
  const socketPath = keeperSocketPath(dataDir);
  const deadline = Date.now() + START_LIMIT_MS;
  while (Date.now() < deadline) {
    const answer = await askKeeper(socketPath, log);
    if (answer instanceof Lease) return answer;
    if (answer === 'absent') await startKeeper(dataDir, log);
    else await delay(100);
  }
  throw new Error(`embedded PostgreSQL: not ready after ${START_LIMIT_MS / 1000} s (its log: ${path.join(dataDir, 'postgres.log')})`);
}

function askKeeper(socketPath: string, log: Log): Promise<Lease | 'absent' | 'stopping'> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    let offered: Lease | undefined;
    let lease: Lease | undefined;
    const turnedAway = () => {
      socket.destroy();
      resolve('stopping');
    };
    socket.on('error', () => socket.destroy());
    socket.on('close', () => (lease ? lease.lost() : resolve(offered ? 'stopping' : 'absent')));
    onMessages<KeeperMessage>(socket, (message) => {
      if (lease) return lease.heard(message);
      if (message.event === 'ready') {
        offered = new Lease(socket, message, log);
        send(socket, { request: 'hold' });
      } else if (message.event === 'held' && offered) {
        lease = offered;
        socket.unref();
        resolve(lease);
      } else {
        turnedAway();
      }
    });
  });
}

async function startKeeper(dataDir: string, log: Log): Promise<void> {
  const logFile = path.join(dataDir, 'postgres.log');
  const logDescriptor = openSync(logFile, 'a', 0o600);
  // Detached: its own session, out of reach of a Ctrl-C or a signal sent to our process group.
  const env = Object.fromEntries(KEEPER_ENVIRONMENT.filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]]));
  const keeper = spawn(process.execPath, [KEEPER, dataDir], { detached: true, cwd: '/', env, stdio: ['ignore', 'ignore', logDescriptor, 'ipc'] });
  closeSync(logDescriptor);
  try {
    await new Promise<void>((resolve, reject) => {
      keeper.on('message', (report: KeeperReport) => {
        if ('notice' in report) log(report.notice);
        else if ('failure' in report) reject(new Error(report.failure));
        else resolve();
      });
      keeper.once('error', reject);
      keeper.once('exit', (code) => reject(new Error(`embedded PostgreSQL: its keeper exited with code ${code} before the server was ready (see ${logFile})`)));
    });
  } finally {
    keeper.removeAllListeners();
    if (keeper.connected) keeper.disconnect();
    keeper.unref();
  }
}

/** A connection to the keeper that never keeps the process alive by itself. */
class Lease {
  readonly port: number;
  readonly #socket: Socket;
  readonly #keeperPid: number;
  readonly #log: Log;
  #leaving = false;
  #told = false;

  constructor(socket: Socket, ready: Extract<KeeperMessage, { event: 'ready' }>, log: Log) {
    this.port = ready.port;
    this.#socket = socket;
    this.#keeperPid = ready.keeperPid;
    this.#log = log;
  }

  heard(message: KeeperMessage): void {
    if (message.event === 'gone') this.#tell(message.reason);
  }

  lost(): void {
    this.#tell(`its keeper (pid ${this.#keeperPid}) ended unexpectedly`);
  }

  #tell(reason: string): void {
    if (this.#leaving || this.#told) return;
    this.#told = true;
    this.#log(`embedded PostgreSQL stopped: ${reason}; requests needing the database fail until this process is restarted`);
  }

  async release(): Promise<void> {
    if (this.#leaving || this.#socket.destroyed) return;
    this.#leaving = true;
    this.#socket.ref();
    const closed = new Promise<void>((resolve) => this.#socket.once('close', () => resolve()));
    const request: HolderMessage = { request: 'release' };
    send(this.#socket, request);
    await closed;
  }
}
