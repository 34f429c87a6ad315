import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import test from 'ava';

const LOGGER = path.resolve(import.meta.dirname, '../../lib/core/logger.ts');

/** Runs `body` in a Node process whose `logger` writes to standard output through `bufferedStdout`. */
function withBufferedLogger(body: string) {
  const script = `
    import { bufferedStdout, createLogger, requestLineWriter } from ${JSON.stringify(LOGGER)};
    const logger = createLogger('info', bufferedStdout());
    const writeLine = requestLineWriter(logger);
    ${body}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const arrivals: Array<{ at: number; text: string }> = [];
  const started = performance.now();
  child.stdout.setEncoding('utf8').on('data', (text: string) => arrivals.push({ at: performance.now() - started, text }));
  return { child, arrivals, exited: once(child, 'exit') };
}

const requestLine = (index: number | string) => `writeLine({ method: 'GET', url: '/${'x'.repeat(100)}/' + ${index}, status: 200, ms: 1, tenant: 'default', requestId: 'r' + ${index} })`;

test('a lone line reaches standard output within about a quarter of a second of being logged, the process still running', async (t) => {
  const { child, arrivals } = withBufferedLogger(`${requestLine(1)}; setTimeout(() => {}, 3000);`);
  t.teardown(() => child.kill('SIGKILL'));
  const deadline = performance.now() + 2000;
  while (arrivals.length === 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  const arrivedAt = Date.now();
  t.is(arrivals.length, 1, 'the line arrived');
  const line = JSON.parse(arrivals[0]?.text ?? '{}') as { requestId?: string; time?: number };
  t.is(line.requestId, 'r1');
  // The line's own time is when it was logged; the flush comes at most 250 ms later, plus scheduling on a busy machine.
  const waited = arrivedAt - (line.time ?? 0);
  t.true(waited >= 0 && waited < 700, `arrived ${waited} ms after it was logged`);
});

test('a fatal line is written at once, before anything can kill the process', async (t) => {
  const { arrivals, exited } = withBufferedLogger(`logger.info('before'); logger.fatal('fatal'); process.kill(process.pid, 'SIGKILL');`);
  await exited;
  const messages = arrivals.map((arrival) => arrival.text).join('').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg);
  t.deepEqual(messages, ['before', 'fatal']);
});

test('lines still gathered at exit are written, in the order they were logged, request lines and others alike', async (t) => {
  const body = `for (let i = 0; i < 300; i++) { ${requestLine('i')}; if (i % 7 === 0) logger.warn({ i }, 'between'); } process.exit(0);`;
  const { arrivals, exited } = withBufferedLogger(body);
  await exited;
  const lines = arrivals.map((arrival) => arrival.text).join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { requestId?: string; i?: number });
  const expected: string[] = [];
  for (let i = 0; i < 300; i++) {
    expected.push(`r${i}`);
    if (i % 7 === 0) expected.push(`warn ${i}`);
  }
  t.deepEqual(lines.map((line) => line.requestId ?? `warn ${line.i}`), expected);
  t.true(arrivals.length > 1 && arrivals.length < 30, `${arrivals.length} writes for ${lines.length} lines`);
});
