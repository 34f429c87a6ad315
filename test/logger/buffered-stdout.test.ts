import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import test from 'ava';

const LOGGER = path.resolve(import.meta.dirname, '../../lib/logger/index.ts');

/** Runs `body` in a Node process whose `logger` writes to standard output through `bufferedStdout`. */
function withBufferedLogger(body: string) {
  const script = `
    import fs, { writeSync } from 'node:fs';
    import { bufferedStdout, createLogger, requestLineWriter } from ${JSON.stringify(LOGGER)};
    const logger = createLogger('info', bufferedStdout());
    const writeLine = requestLineWriter(logger);
    ${body}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  /** What each read of standard output brought. */
  const arrivals: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (text: string) => arrivals.push(text));
  return { child, arrivals, exited: once(child, 'exit') };
}

const requestLine = (index: number | string) => `writeLine({ method: 'GET', url: '/${'x'.repeat(100)}/' + ${index}, status: 200, ms: 1, tenant: 'default', requestId: 'r' + ${index} })`;

test('a lone line is written within a quarter of a second of being logged, the process still running', async (t) => {
  // Timers fire in the order of their deadlines, however late a loaded machine runs them: a
  // marker written by a timer set to 300 ms when the line is logged comes after the line only if
  // the logger's own timer was due within 300 ms of it, whatever the wall-clock delays.
  const { child, arrivals } = withBufferedLogger(`${requestLine(1)}; setTimeout(() => writeSync(1, 'marker\\n'), 300); setInterval(() => {}, 60_000);`);
  t.teardown(() => child.kill('SIGKILL'));
  const lines = () => arrivals.join('').split('\n').filter(Boolean);
  while (lines().length < 2 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
  t.is(child.exitCode, null, 'the process is still running');
  t.deepEqual(
    lines().map((line) => (line.startsWith('{') ? (JSON.parse(line) as { requestId?: string }).requestId : line)),
    ['r1', 'marker'],
  );
});

test('a fatal line is written at once, before anything can kill the process', async (t) => {
  const { arrivals, exited } = withBufferedLogger(`logger.info('before'); logger.fatal('fatal'); process.kill(process.pid, 'SIGKILL');`);
  await exited;
  const messages = arrivals.join('').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg);
  t.deepEqual(messages, ['before', 'fatal']);
});

/**
 * Counts the writes to standard output (sonic-boom's `fs.writeSync` calls), and writes the count
 * as a last line once the logger has written what it still held at exit. A reader cannot count
 * them: a busy one gets several writes in one read.
 */
const COUNT_WRITES = `
  let writes = 0;
  const countedWrite = fs.writeSync;
  fs.writeSync = (fd, ...rest) => { if (fd === 1) writes += 1; return countedWrite(fd, ...rest); };
  process.on('exit', () => countedWrite(1, JSON.stringify({ writes }) + '\\n'));
`;

test('lines still gathered at exit are written, in the order they were logged, request lines and others alike', async (t) => {
  const body = `${COUNT_WRITES} for (let i = 0; i < 300; i++) { ${requestLine('i')}; if (i % 7 === 0) logger.warn({ i }, 'between'); } process.exit(0);`;
  const { arrivals, exited } = withBufferedLogger(body);
  await exited;
  const lines = arrivals.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { requestId?: string; i?: number; writes?: number });
  const writes = lines.pop()?.writes ?? 0;
  const expected: string[] = [];
  for (let i = 0; i < 300; i++) {
    expected.push(`r${i}`);
    if (i % 7 === 0) expected.push(`warn ${i}`);
  }
  t.deepEqual(lines.map((line) => line.requestId ?? `warn ${line.i}`), expected);
  t.true(writes > 1 && writes < 30, `${writes} writes for ${lines.length} lines`);
});
