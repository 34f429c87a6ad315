import { ConfigError } from './config/index.ts';
import { startService, type Service } from './server.ts';

/** SPEC §2.5: the process is gone this long after the signal, even if releasing something hangs. */
const SHUTDOWN_LIMIT_MS = 10_000;

/** `make run`: start the service, and stop it cleanly on SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const service = await startService();
  const stop = stopOnce(service);
  // The service drains first, then releases its database (SPEC §2.5).
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop({ signal }, 0));
  // A promise a handler left floating is that handler's bug: log it and keep serving the rest.
  process.on('unhandledRejection', (error) => service.runtime.logger.error({ err: error }, 'unhandled promise rejection'));
  // A throw from a timer or an emitter may leave shared state broken: finish what is in flight, then exit 1.
  process.on('uncaughtException', (error) => {
    service.runtime.logger.fatal({ err: error }, 'uncaught exception');
    stop({ reason: 'uncaught exception' }, 1);
  });
  // Under `make dev` (an IPC channel): say where it listens, and stop with the supervisor.
  process.send?.({ listening: service.url });
  process.once('disconnect', () => stop({ reason: 'make dev stopped' }, 0));
}

/** Drains and releases the service once, then exits with `code` (1 if shutting down fails). */
function stopOnce(service: Service): (why: Record<string, string>, code: number) => void {
  let stopping = false;
  return (why, code) => {
    if (stopping) return;
    stopping = true;
    service.runtime.logger.info(why, 'shutting down');
    setTimeout(() => {
      service.runtime.logger.error({ limitMs: SHUTDOWN_LIMIT_MS }, 'shutdown did not finish in time');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    service.close().then(
      () => process.exit(code),
      (error: unknown) => {
        service.runtime.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? `configuration error: ${error.message}` : `start-up failed: ${(error as Error).message}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
