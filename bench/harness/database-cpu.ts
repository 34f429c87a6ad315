import { existsSync, readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import type { CpuProbe } from './load.ts';
import { parseProcessStat, type ProcessStat } from './processes.ts';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * The CPU time of the PostgreSQL server of `databaseUrl`, to price each request in the
 * database's work too: every process on this machine named `postgres` (backends and background
 * workers alike; another database server's count too, as there is no telling them apart), and
 * those named one of `alsoCommands` (a pooler in front of it). Undefined where the server is not
 * on this machine or /proc is missing.
 */
export function databaseCpuProbe(databaseUrl: string, alsoCommands: readonly string[] = []): CpuProbe | undefined {
  if (!existsSync('/proc/self/stat') || !isOnThisMachine(databaseUrl)) return undefined;
  return commandsCpuProbe(new Set(['postgres', ...alsoCommands]));
}

/** The host pg connects to is a loopback one, or a Unix socket's folder. */
export function isOnThisMachine(databaseUrl: string): boolean {
  // pg's own reading of the URL: `?host=`, a host left out, `socket:` and PGHOST are its to interpret.
  const { host } = new pg.Client({ connectionString: databaseUrl });
  return host.startsWith('/') || LOOPBACK_HOSTS.has(host.toLowerCase());
}

/**
 * A counter of the CPU time of the processes named one of `commands`. Backends come and go (one
 * per connection), and only a process present at two reads can say what it spent between them:
 * each read adds what the processes present at both it and the previous read spent in between.
 * So one that starts in between counts from the next read on, and one that exits in between
 * loses what it spent since the last read (its /proc entry is gone, its time with it).
 */
function commandsCpuProbe(commands: ReadonlySet<string>): CpuProbe {
  let previous = new Map<string, number>();
  let total = 0;
  return {
    cpuMicroseconds() {
      const current = cpuByProcess(commands);
      for (const [identity, microseconds] of current) {
        const before = previous.get(identity);
        if (before !== undefined) total += microseconds - before;
      }
      previous = current;
      return total;
    },
  };
}

/** CPU time of each process named one of `commands`, keyed by pid and start time (a pid may be reused). */
function cpuByProcess(commands: ReadonlySet<string>): Map<string, number> {
  const found = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat !== undefined && commands.has(stat.command)) found.set(`${entry}@${stat.startTicks}`, stat.cpuMicroseconds);
  }
  return found;
}

function readStat(pid: string): ProcessStat | undefined {
  try {
    return parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    // It exited since /proc was listed.
    return undefined;
  }
}

/** The CPU time of one backend (`pg_backend_pid()`), if this machine's /proc shows it. */
export function backendCpuMicroseconds(pid: number): number | undefined {
  return readStat(String(pid))?.cpuMicroseconds;
}
