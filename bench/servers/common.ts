import type { Server } from 'node:http';

/** The sample project's heartbeat URL, served at the same path by every comparison server. */
export const HEARTBEAT_PATH = '/api/sample/heartbeat';

/** Listens on PORT and HOST as the harness set them, and closes on SIGTERM like the service. */
export function listenFromEnvironment(server: Server, onClose: () => Promise<void> = async () => {}): void {
  const port = Number(process.env.PORT);
  const host = process.env.HOST ?? '127.0.0.1';
  server.listen(port, host);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => {
      onClose().finally(() => process.exit(0));
    });
  });
}
