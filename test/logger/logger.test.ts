import { Writable } from 'node:stream';
import test from 'ava';
import fc from 'fast-check';
import { createLogger, requestLineWriter, type RequestLine } from '../../lib/logger/index.ts';

/** A logger writing into an array, one entry a line. */
function collecting(level = 'info') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger(level, destination), lines };
}

const line = fc.record({
  method: fc.string({ unit: 'grapheme' }),
  url: fc.string({ unit: 'binary' }),
  status: fc.integer({ min: 100, max: 599 }),
  ms: fc.double({ min: 0, max: 1e6, noNaN: true }).map((ms) => Math.round(ms * 100) / 100),
  tenant: fc.option(fc.string(), { nil: undefined }),
  requestId: fc.string(),
  uid: fc.option(fc.string(), { nil: undefined }),
  project: fc.option(fc.string(), { nil: undefined }),
  route: fc.option(fc.string(), { nil: undefined }),
  error: fc.option(fc.string({ unit: 'binary' }), { nil: undefined }),
});

// Invariant: the request line written by hand is the line pino writes for the same fields: the
// same keys in the same order, the same values, whatever the text (quotes, control characters,
// lone surrogates), the time aside.
test('a request line is exactly the line pino writes for its fields', (t) => {
  fc.assert(
    fc.property(line, (fields: RequestLine) => {
      const { logger, lines } = collecting();
      requestLineWriter(logger)(fields);
      logger.info(fields, 'request');
      const [byHand, byPino] = lines.map((each) => JSON.parse(each) as Record<string, unknown>);
      if (byHand === undefined || byPino === undefined) throw new Error('a line is missing');
      const { time: handTime, ...hand } = byHand;
      const { time: pinoTime, ...pinos } = byPino;
      t.deepEqual(Object.keys(hand), Object.keys(pinos));
      t.deepEqual(hand, pinos);
      t.true(typeof handTime === 'number' && typeof pinoTime === 'number' && Math.abs(handTime - pinoTime) < 1000);
    }),
    { numRuns: 300 },
  );
});

test('no request line is written when the level is above info', (t) => {
  const { logger, lines } = collecting('warn');
  requestLineWriter(logger)({ method: 'GET', url: '/', status: 200, ms: 1, tenant: 'default', requestId: 'r' });
  t.deepEqual(lines, []);
});

test('a logger createLogger did not make (a child) still writes request lines, through pino', (t) => {
  const { logger, lines } = collecting();
  requestLineWriter(logger.child({ area: 'projects' }))({ method: 'GET', url: '/', status: 200, ms: 1, tenant: undefined, requestId: 'r' });
  t.like(JSON.parse(lines[0] ?? '{}'), { area: 'projects', method: 'GET', status: 200, requestId: 'r', msg: 'request' });
});
