import { Writable } from 'node:stream';
import test from 'ava';
import fc from 'fast-check';
import { logEscaped, uncaughtExceptionLog } from '../../lib/process/escaped-errors.ts';
import { createLogger } from '../../lib/logger/index.ts';
import { newRequestState, runInRequest } from '../../lib/core/request-state.ts';

function collecting() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}

const withUnreadableStack = Object.defineProperty(new Error('unreadable stack'), 'stack', {
  get() {
    throw new Error('stack getter');
  },
});
const hostileProxy = new Proxy(
  {},
  {
    get() {
      throw new Error('get trap');
    },
    getPrototypeOf() {
      throw new Error('prototype trap');
    },
    ownKeys() {
      throw new Error('keys trap');
    },
  },
);
const unserializable = {
  toJSON() {
    throw new Error('toJSON');
  },
};
const thrownValue = fc.oneof(fc.anything({ withBigInt: true, withObjectString: true, withNullPrototype: true }), fc.constantFrom(withUnreadableStack, hostileProxy, unserializable));

// Invariant: whatever a callback throws, logging it never throws (Node would end the process
// at once, from inside its uncaughtException listener) and writes one fatal line.
test('whatever value is thrown, it is logged on one fatal line, and logging it does not throw', (t) => {
  fc.assert(
    fc.property(thrownValue, (value) => {
      const { logger, lines } = collecting();
      uncaughtExceptionLog(logger).log(value);
      return lines.length === 1 && lines[0]?.level === 60 && lines[0]?.msg === 'uncaught exception outside any request';
    }),
  );
  t.pass();
});

test('a rejection is logged with the request whose async context it came from', (t) => {
  const { logger, lines } = collecting();
  runInRequest(newRequestState('request-7', undefined, 'acme'), () => logEscaped(logger, 'error', 'unhandled promise rejection', hostileProxy));
  t.like(lines[0], { level: 50, err: 'a thrown value that could not be read', requestId: 'request-7', tenant: 'acme', msg: 'unhandled promise rejection in a request' });
});
