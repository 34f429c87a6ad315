import { setTimeout as sleep } from 'node:timers/promises';
import { runMain } from './process/run-main.ts';
import { logEscaped, uncaughtExceptionLog } from './process/escaped-errors.ts';
import { outsideRequests } from './core/request-state.ts';
import { startService, type Service } from './server.ts';
import { tracingWanted } from './tracing/switch.ts';

/** SPEC §2.5: the process is gone this long after the signal, even if releasing something hangs. */
const SHUTDOWN_LIMIT_MS = 10_000;
/** Exit code after an escaped exception (sysexits' EX_SOFTWARE): 1 is a SIGTERM stop that overran or failed. */
const ESCAPED_EXCEPTION_EXIT_CODE = 70;

/** `make run`: start the service, and stop it cleanly on SIGTERM or SIGINT. */
async function main(): Promise<void> {
  // Imported only when asked for: without traces, no OpenTelemetry module is ever loaded. Started
  // before the service, so the projects' handlers are loaded with node:http already patched.
  const tracing = tracingWanted(process.env) ? (await import('./tracing/start.ts')).startTracing() : undefined;
  const service = await startService({ tracing });
  const { logger } = service.runtime;
  const exceptions = uncaughtExceptionLog(logger);
  const stop = stopOnce(service, () => exceptions.logRepeats());
  // The service drains first, then releases its database (SPEC §2.5). Before that, it may keep
  // serving a while with /readyz answering 503, so that a load balancer stops sending first.
  const unreadyMs = service.runtime.config.http.unreadyBeforeCloseMs;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop({ signal }, 0, unreadyMs));
  // A rejected promise has unwound the code that made it, leaving no shared state half-changed:
  // a handler's floating promise is that handler's bug, logged, and the rest keeps being served.
  process.on('unhandledRejection', (reason) => logEscaped(logger, 'error', 'unhandled promise rejection', reason));
  // A throw from a timer or an emitter may leave shared state broken: finish what is in flight,
  // then exit for a supervisor to restart. Later throws are logged and change nothing more.
  process.on('uncaughtException', (error) => {
    exceptions.log(error);
    // The drain is the service's, not the request's whose callback threw.
    outsideRequests(() => stop({ reason: 'uncaught exception' }, ESCAPED_EXCEPTION_EXIT_CODE));
  });
  // Under `make dev` (an IPC channel): say where it listens, and stop with the supervisor.
  process.send?.({ listening: service.url });
  process.once('disconnect', () => stop({ reason: 'make dev stopped' }, 0));
}

/**
 * Stops the service once, then exits with the highest code any call asked for. `unreadyMs`: how
 * long it keeps serving first, `/readyz` answering 503.
 */
function stopOnce(service: Service, beforeExit: () => void): (why: Record<string, string>, code: number, unreadyMs?: number) => void {
  let stopping = false;
  let exitCode = 0;
  const exit = (code: number) => {
    beforeExit();
    process.exit(Math.max(exitCode, code));
  };
  return (why, code, unreadyMs = 0) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) return;
    stopping = true;
    service.runtime.logger.info({ ...why, ...(unreadyMs > 0 ? { unreadyMs } : {}) }, 'shutting down');
    setTimeout(() => {
      service.runtime.logger.error({ limitMs: SHUTDOWN_LIMIT_MS }, 'shutdown did not finish in time');
      exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    service.runtime.readiness.beginDraining();
    sleep(unreadyMs)
      .then(() => service.close())
      .then(
        () => exit(0),
        (error: unknown) => {
          service.runtime.logger.error({ err: error }, 'shutdown failed');
          exit(1);
        },
      );
  };
}

runMain(main, 'start-up failed');
