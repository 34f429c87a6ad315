import type { Logger } from '../logger/index.ts';
import { currentRequest } from '../core/request-state.ts';

/** What escaped every request: a throw from a callback, or a rejection nobody handled. */
export type Escape = 'uncaught exception' | 'unhandled promise rejection';

/** What the line says of a thrown value that throws when read (a getter, a proxy's trap). */
const UNREADABLE = 'a thrown value that could not be read';

/**
 * Logs an error that no request caught at `level`, with the stack and the request whose async
 * context it came from (its id, tenant, project and route), or saying it came from none. Node
 * calls its `uncaughtException` and `unhandledRejection` listeners in that context, with
 * AsyncLocalStorage over AsyncContextFrame or over async_hooks, except (over async_hooks) for a
 * throw from a `queueMicrotask` callback: that one reads as outside any request. Never throws:
 * a throw from Node's listeners would end the process at once.
 */
export function logEscaped(logger: Logger, level: 'fatal' | 'error', what: Escape, error: unknown): void {
  const request = currentRequest();
  const message = `${what} ${request === undefined ? 'outside any request' : 'in a request'}`;
  const fields = request === undefined ? {} : { requestId: request.requestId, tenant: request.tenant, project: request.route?.project, route: request.route?.name };
  try {
    logger[level]({ err: error, ...fields }, message);
  } catch {
    logger[level]({ err: UNREADABLE, ...fields }, message);
  }
}

export interface UncaughtExceptionLog {
  /** Logs `error` as a fatal line, unless it repeats one already logged (then it is counted). */
  log(error: unknown): void;
  /** One line counting the repeats, if there were any. */
  logRepeats(): void;
}

/**
 * Fatal lines for uncaught exceptions, each one once: a `setInterval` that throws every few
 * milliseconds while the service drains is one line and a count, not thousands of lines. An
 * exception repeats another when it has the same stack (the same message thrown from the same
 * place); a thrown value without a stack is always logged.
 */
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
