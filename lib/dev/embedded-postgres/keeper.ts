import type { ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import type { Server } from 'node:net';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { databaseFolder, postgresBinaries } from './places.ts';
import { embeddedPassword } from './password.ts';
import { EMBEDDED_DATABASE, type KeeperMessage, type KeeperReport } from './lease.ts';
import { Leases } from './keeper-leases.ts';
import { keeperSocketPath, listenAlone } from './keeper-socket.ts';
import { type Cluster, createDatabaseIfMissing, initialiseCluster, startServer, stopLeftOverServer, stopServer } from './postgres-server.ts';
import { serverAccount } from './server-account.ts';

/**
 * `keeper.ts <dataDir>`: one detached process per data folder; it starts the server and stops it as soon as the last
 * process using it is gone, stopped or killed. It reports to its starter over IPC, then detaches.
 */
const FIRST_HOLDER_GRACE_MS = 10_000;
const START_ATTEMPTS = 3;

async function keep(dataDir: string): Promise<void> {
  const listener = await listenAlone(keeperSocketPath(dataDir));
  if (listener === undefined) return reportAndExit({ busy: true }, 0);
  const leases = new Leases(listener);
  const cluster = await openCluster(dataDir);
  const leftOver = await stopLeftOverServer(cluster.dataFolder);
  if (leftOver) {
    report({ notice: `embedded PostgreSQL: stopped a server left running on ${cluster.dataFolder} by a process that is gone (pid ${leftOver.pid}, port ${leftOver.port}); starting a fresh one` });
  }
  const password = embeddedPassword(dataDir);
  initialiseCluster(cluster, password);
  const { server, port } = await startOnFreePort(cluster);
  await createDatabaseIfMissing(port, password, EMBEDDED_DATABASE).catch(async (error: unknown) => {
    await stopServer(server);
    throw error;
  });
  serve(leases, listener, server, port);
  report({ ready: true }, () => process.disconnect?.());
}

function serve(leases: Leases, listener: Server, server: ChildProcess, port: number): void {
  let stopping = false;
  const shutDown = async (message: KeeperMessage) => {
    if (stopping) return;
    stopping = true;
    await stopServer(server);
    leases.end(message);
    listener.close();
    setTimeout(() => process.exit(0), 1000).unref();
  };
  server.once('exit', (code, signal) => {
    const how = signal ? `signal ${signal}` : `code ${code}`;
    void shutDown({ event: 'gone', reason: `the server (pid ${server.pid}, port ${port}) exited with ${how}, stopped outside spaceport` });
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => void shutDown({ event: 'gone', reason: `its keeper (pid ${process.pid}) got ${signal}` }));
  }
  leases.serve({ event: 'ready', port, keeperPid: process.pid }, FIRST_HOLDER_GRACE_MS, () => void shutDown({ event: 'stopped' }));
}

async function openCluster(dataDir: string): Promise<Cluster> {
  const account = serverAccount();
  const binaries = await postgresBinaries(account);
  const logFile = path.join(dataDir, 'postgres.log');
  return { account, binaries, dataFolder: databaseFolder(dataDir, account), logFile, logDescriptor: openSync(logFile, 'a', 0o600) };
}

/** A free port can be taken between the probe and the server's bind: then another one is tried. */
async function startOnFreePort(cluster: Cluster): Promise<{ server: ChildProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { server: await startServer(cluster, port), port };
    } catch (error) {
      if (attempt === START_ATTEMPTS) throw error;
    }
  }
}

function report(message: KeeperReport, sent: () => void = () => {}): void {
  if (process.connected && process.send) process.send(message, sent);
  else sent();
}

function reportAndExit(message: KeeperReport, code: number): void {
  report(message, () => process.exit(code));
}

const dataDir = process.argv[2];
if (dataDir === undefined) {
  process.stderr.write('usage: keeper.ts <dataDir>\n');
  process.exit(2);
}
keep(path.resolve(dataDir)).catch((error: unknown) => {
  process.stderr.write(`${new Date().toISOString()} keeper: ${(error as Error).stack ?? String(error)}\n`);
  reportAndExit({ failure: (error as Error).message.split('\n')[0] ?? String(error) }, 1);
});
