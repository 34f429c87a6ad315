import type { Logger } from '../logger/index.ts';
import { currentRequest, requestPlace } from '../core/request-state.ts';

export type Escape = 'uncaught exception' | 'unhandled promise rejection';

/** What the line says of a thrown value that throws when read (a getter, a proxy's trap). */
const UNREADABLE = 'a thrown value that could not be read';

/**
 * With the request whose async context it came from (Node calls the listeners there, except over async_hooks for a
 * `queueMicrotask` throw). Never throws: a throw from Node's listeners would end the process at once.
 */
export function logEscaped(logger: Logger, level: 'fatal' | 'error', what: Escape, error: unknown): void {
  const request = currentRequest();
  const message = `${what} ${request === undefined ? 'outside any request' : 'in a request'}`;
  const fields = request === undefined ? {} : { ...requestPlace(request), tenant: request.tenant };
  try {
    logger[level]({ err: error, ...fields }, message);
  } catch {
    logger[level]({ err: UNREADABLE, ...fields }, message);
  }
}

export interface UncaughtExceptionLog {
  log(error: unknown): void;
  logRepeats(): void;
}

/** Each stack once: a `setInterval` throwing every few milliseconds while the service drains is one line and a count, not thousands. */
export function uncaughtExceptionLog(logger: Logger): UncaughtExceptionLog {
  const logged = new Set<string>();
  let repeats = 0;
  return {
    log(error) {
      const stack = stackOf(error);
      if (stack !== undefined && logged.has(stack)) {
        repeats++;
        return;
      }
      if (stack !== undefined) logged.add(stack);
      logEscaped(logger, 'fatal', 'uncaught exception', error);
    },
    logRepeats() {
      if (repeats > 0) logger.warn({ repeats }, 'uncaught exceptions repeated one already logged');
    },
  };
}

function stackOf(error: unknown): string | undefined {
  try {
    return error instanceof Error && typeof error.stack === 'string' ? error.stack : undefined;
  } catch {
    return undefined;
  }
}
