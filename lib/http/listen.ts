import type { Server } from 'node:net';

/** `server.listen(port, host)`, failing with the setting to change named: Node's words name the value alone. */
export function listenOn(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(new Error(listenFailure(error, host, port)));
    server.once('error', failed);
    server.listen(port, host, () => {
      // Left on, it would swallow the first error the listening server meets, unlogged.
      server.off('error', failed);
      resolve();
    });
  });
}

function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  if (error.code === 'EADDRINUSE') return `PORT ${port}: another process already listens there on ${host} (${error.code})`;
  if (error.code === 'EACCES') return `PORT ${port}: this user may not listen on it (${error.code}; ports under 1024 need privileges)`;
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
    return `HOST ${host}: not an address of this machine (${error.code}); 0.0.0.0 listens on every IPv4 address, :: on every address`;
  }
  return `cannot listen on HOST ${host}, PORT ${port}: ${error.message}`;
}
