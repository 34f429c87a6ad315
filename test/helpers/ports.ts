import { createServer } from 'node:net';

/** Whether nothing listens on `port` of 127.0.0.1 right now. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** `count` distinct ports of 127.0.0.1, free now, from `from` to `from + span`, each passing `alsoFree` too. */
export async function freePorts(count: number, from: number, span: number, alsoFree: (port: number) => Promise<boolean> = async () => true): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = from + Math.floor(Math.random() * span);
    if (!ports.includes(port) && (await portIsFree(port)) && (await alsoFree(port))) ports.push(port);
  }
  return ports;
}
