import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { freePort } from '../../lib/dev/embedded-postgres/free-port.ts';
import { debianBinary, startDaemon, type Binary } from './daemons.ts';
import { scratchFolder } from './scratch.ts';

const START_LIMIT_MS = 10_000;

/** The path of Debian's `haproxy`, installed with apt-get first when it is missing; otherwise why it cannot be had. */
export function haproxyBinary(): Promise<Binary> {
  return debianBinary('haproxy', ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy'], ['-v']);
}

export interface Balancer {
  /** `http://127.0.0.1:port` of the front end. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * HAProxy in front of `backends` (ports on 127.0.0.1), as a deployment would run it: round robin,
 * health checks on /readyz every 500 ms (down after two failures: an instance draining after
 * SIGTERM answers 503 there, or refuses the connection), and a request whose
 * connection to its server failed sent again to the other one. Every answer names the
 * server that gave it in `X-Served-By`. Stopped after the test.
 */
export async function startBalancer(t: ExecutionContext, binary: string, backends: Record<string, number>): Promise<Balancer> {
  const port = await freePort();
  const folder = scratchFolder('haproxy');
  const configFile = path.join(folder, 'haproxy.cfg');
  writeFileSync(configFile, configuration(port, backends));
  const haproxy = startDaemon(binary, ['-db', '-f', configFile]);
  t.teardown(haproxy.stop);
  const url = `http://127.0.0.1:${port}`;
  if (!(await servesEveryBackend(url, Object.keys(backends)))) {
    await haproxy.stop();
    throw new Error(`haproxy did not bring up every backend within ${START_LIMIT_MS} ms: ${haproxy.stderr()}`);
  }
  return { url, stop: haproxy.stop };
}

function configuration(port: number, backends: Record<string, number>): string {
  const servers = Object.entries(backends).map(([name, backendPort]) => `  server ${name} 127.0.0.1:${backendPort} check inter 500ms fall 2 rise 1`);
  return [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-keep-alive 10s',
    // A busy machine may take a while to answer a check: slow is not down.
    '  timeout check 2s',
    // Retries only a connection that failed, which no server can have acted on. Retrying one
    // closed without an answer (empty-response) would be safe for a server that drains well, but
    // would also hide one that drops requests on SIGTERM: this balancer is there to test that.
    '  retries 3',
    '  retry-on conn-failure',
    '  option redispatch 1',
    '  option forwardfor',
    'frontend public',
    `  bind 127.0.0.1:${port}`,
    '  default_backend services',
    'backend services',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  http-response set-header X-Served-By %[srv_name]',
    ...servers,
    '',
  ].join('\n');
}

/** Polls the front end until answers have come from every backend. */
async function servesEveryBackend(url: string, names: readonly string[]): Promise<boolean> {
  const seen = new Set<string>();
  const deadline = Date.now() + START_LIMIT_MS;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      const server = response.headers.get('x-served-by');
      if (response.status === 200 && server) seen.add(server);
      if (names.every((name) => seen.has(name))) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
