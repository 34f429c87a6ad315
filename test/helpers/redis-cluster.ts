import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import { Redis } from 'ioredis';
import { type Daemon, debianBinary, startDaemon } from './daemons.ts';
import { freePorts, portIsFree } from './ports.ts';
import { scratchFolder } from './scratch.ts';

const run = promisify(execFile);
const READY_LIMIT_MS = 30_000;

/** A Redis Cluster of Debian's `redis-server` on loopback, in a directory of its own. */
export interface RedisCluster {
  /** `redis://127.0.0.1:port` of every master and replica, as REDIS_CLUSTER_NODES takes them. */
  readonly seeds: readonly string[];
  /** The node serving `key`'s slot as master now. */
  masterOf(key: string): Promise<{ port: number; stop(): Promise<void> }>;
  /** Resolves once every slot is served again (after a failover). */
  settled(): Promise<void>;
}

/**
 * Starts `masters` cluster-enabled nodes (and `replicasEach` replicas of each) on free ports,
 * never the machine's own Redis, and joins them with `redis-cli --cluster create`; stopped and
 * removed after the test. Resolves to undefined (with why) where redis-server cannot be had.
 */
export async function startRedisCluster(
  t: ExecutionContext,
  { masters = 3, replicasEach = 0, nodeTimeoutMs = 2000 } = {},
): Promise<RedisCluster | { missing: string }> {
  const server = await debianBinary('redis-server', ['/usr/bin/redis-server', 'redis-server'], ['--version']);
  if ('missing' in server) return server;
  const directory = scratchFolder('redis-cluster');
  const nodes = new Map<number, Daemon>();
  t.teardown(async () => {
    await Promise.all([...nodes.values()].map((node) => node.stop()));
    rmSync(directory, { recursive: true, force: true });
  });
  const ports = await freeClusterPorts(masters * (1 + replicasEach));
  for (const port of ports) {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
      '--cluster-node-timeout', String(nodeTimeoutMs), '--dir', directory, '--save', '', '--appendonly', 'no', '--logfile', `redis-${port}.log`];
    nodes.set(port, startDaemon(server.path, args));
  }
  await Promise.all(ports.map((port) => answers(port)));
  const addresses = ports.map((port) => `127.0.0.1:${port}`);
  await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasEach), '--cluster-yes'], { timeout: READY_LIMIT_MS });
  const cluster: RedisCluster = {
    seeds: ports.map((port) => `redis://127.0.0.1:${port}`),
    masterOf: async (key) => {
      const port = await masterPort(ports, nodes, key);
      return { port, stop: () => nodes.get(port)?.stop() ?? Promise.resolve() };
    },
    settled: () => clusterOk(ports.filter((port) => nodes.get(port)?.child.exitCode === null)),
  };
  await cluster.settled();
  return cluster;
}

/** `count` ports free both as themselves and as their cluster bus (port + 10000). */
async function freeClusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const [port = 0] = await freePorts(1, 20_000, 20_000, (candidate) => portIsFree(candidate + 10_000));
    if (!ports.some((taken) => Math.abs(taken - port) === 10_000 || taken === port)) ports.push(port);
  }
  return ports;
}

async function answers(port: number): Promise<void> {
  const deadline = Date.now() + READY_LIMIT_MS;
  for (;;) {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      client.disconnect();
    }
  }
}

async function clusterOk(ports: readonly number[]): Promise<void> {
  const deadline = Date.now() + READY_LIMIT_MS;
  for (;;) {
    const states = await Promise.all(ports.map((port) => nodeInfo(port, 'cluster', 'info')));
    const masters = await Promise.all(ports.map((port) => slotMasters(port)));
    const served = masters.every((list) => list.length > 0 && list.every((master) => ports.includes(master)));
    if (served && states.every((info) => /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info))) return;
    if (Date.now() > deadline) throw new Error(`the Redis cluster is not ok after ${READY_LIMIT_MS} ms:\n${states.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function masterPort(ports: readonly number[], nodes: Map<number, Daemon>, key: string): Promise<number> {
  const living = ports.filter((port) => nodes.get(port)?.child.exitCode === null);
  const slot = Number(await nodeInfo(living[0] ?? 0, 'cluster', 'keyslot', key));
  const slots = JSON.parse(JSON.stringify(await command(living[0] ?? 0, ['cluster', 'slots']))) as Array<[number, number, [string, number]]>;
  const range = slots.find(([first, last]) => slot >= first && slot <= last);
  if (range === undefined) throw new Error(`no master serves slot ${slot}`);
  return range[2][1];
}

/** The ports of the masters `port`'s node sees serving slots (none if it does not answer). */
async function slotMasters(port: number): Promise<number[]> {
  const slots = await command(port, ['cluster', 'slots']).catch(() => []);
  return (slots as Array<[number, number, [string, number]]>).map((range) => range[2][1]);
}

async function nodeInfo(port: number, ...args: string[]): Promise<string> {
  return String(await command(port, args).catch((error: Error) => error.message));
}

async function command(port: number, args: string[]): Promise<unknown> {
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    return await client.call(args[0] ?? 'ping', ...args.slice(1));
  } finally {
    client.disconnect();
  }
}
