import test, { type ExecutionContext } from 'ava';
import { createTenant } from '../../lib/tenancy/index.ts';
import { KeepAliveClient } from '../helpers/keep-alive.ts';
import { connectionRefused, startMain, until, type MainProcess } from '../helpers/main-process.ts';
import { fixtureProjects, migrateFileDatabase } from '../helpers/projects.ts';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { testKnex } from '../helpers/database.ts';

// Project `crashy` (tenant `default`) fails outside its requests; project `steady` answers
// another tenant's requests slowly: they are in flight when `crashy` fails.
const OTHER_TENANT = 'patient';
const CONTEXT_FRAME = '--experimental-async-context-frame';
const EXIT_AFTER_ESCAPED_EXCEPTION = 70;
const FATAL = 60;
const ERROR = 50;

test.before(async () => {
  await migrateFileDatabase();
  const knex = testKnex(await testDatabaseUrl());
  await createTenant(knex, OTHER_TENANT).finally(() => knex.destroy());
});
test.after.always(dropTestDatabase);

type Entry = Record<string, unknown> & { err?: { message?: string; stack?: string } };

/** The service over the two projects, with AsyncLocalStorage over AsyncContextFrame or without it. */
function startEscaping(t: ExecutionContext, { contextFrame }: { contextFrame: boolean }): Promise<MainProcess> {
  const otherOptions = (process.env.NODE_OPTIONS ?? '').replace(CONTEXT_FRAME, '').trim();
  return startMain(t, {
    PROJECTS_DIR: fixtureProjects('escaping'),
    NODE_OPTIONS: contextFrame ? `${CONTEXT_FRAME} ${otherOptions}` : otherOptions,
  });
}

function entries(main: MainProcess): Entry[] {
  return main.lines.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Entry] : []));
}

function atLevel(main: MainProcess, level: number): Entry[] {
  return entries(main).filter((entry) => entry.level === level);
}

/** A request of `crashy`, with the request id it is logged under. */
async function crashy(main: MainProcess, pathAndQuery: string, requestId: string): Promise<string> {
  const response = await fetch(`${main.url}/api/crashy${pathAndQuery}`, { headers: { 'x-request-id': requestId } });
  return response.text();
}

/** `count` requests of the other tenant, resolved once all of them are in their handler. */
async function slowRequestsInFlight(main: MainProcess, count: number): Promise<Array<Promise<Response>>> {
  const started = () => main.lines.filter((line) => line === 'steady request started').length;
  const before = started();
  const requests = Array.from({ length: count }, () => fetch(`${main.url}/api/steady/slow?ms=4000`, { headers: { tenant: OTHER_TENANT } }));
  // A test that fails early never awaits them: their failure when the process is killed is not one more.
  for (const request of requests) request.catch(() => {});
  if (!(await until(() => started() === before + count, 10_000))) throw new Error('the slow requests did not start');
  return requests;
}

async function answers(requests: Array<Promise<Response>>): Promise<Array<[number, string]>> {
  return Promise.all(requests.map(async (request) => {
    const response = await request;
    return [response.status, await response.text()] as [number, string];
  }));
}

/** The fatal line of the escaped exception whose message includes `text`. */
function fatalLine(main: MainProcess, text: string): Entry | undefined {
  return atLevel(main, FATAL).find((entry) => entry.err?.message?.includes(text));
}

function requestFields(entry: Entry | undefined): Record<string, unknown> {
  return { msg: entry?.msg, requestId: entry?.requestId, tenant: entry?.tenant, project: entry?.project, route: entry?.route };
}

test('a throw from a timer a route set is logged naming its request; the other tenant\'s requests in flight complete, new connections are refused, exit 70', async (t) => {
  const main = await startEscaping(t, { contextFrame: true });
  const inFlight = await slowRequestsInFlight(main, 3);
  t.is(await crashy(main, '/timer-throw', 'crash-by-timer'), 'answered');

  t.true(await until(() => connectionRefused(main.url), 2000), 'new connections are refused once the drain starts');
  t.is(main.child.exitCode, null, 'the process waits for the requests in flight');
  t.deepEqual(await answers(inFlight), [[200, 'finished'], [200, 'finished'], [200, 'finished']]);
  t.deepEqual(await main.exited, { code: EXIT_AFTER_ESCAPED_EXCEPTION, signal: null });

  const fatal = atLevel(main, FATAL);
  t.is(fatal.length, 1, 'logged once');
  t.deepEqual(requestFields(fatal[0]), {
    msg: 'uncaught exception in a request',
    requestId: 'crash-by-timer',
    tenant: 'default',
    project: 'crashy',
    route: 'GET /timer-throw',
  });
  t.regex(fatal[0]?.err?.stack ?? '', /thrown from a timer.*crashy\/api\/routes\.js/s, 'with the stack, from the route file');
  t.is(entries(main).filter((entry) => entry.msg === 'shutting down').length, 1);
});

test('an \'error\' event with no listener is logged naming its request; exceptions during the drain are logged once each and do not cut it short', async (t) => {
  const main = await startEscaping(t, { contextFrame: true });
  // Connections opened before the drain: requests on them are still served during it.
  const [firstClient, secondClient] = [new KeepAliveClient(main.url), new KeepAliveClient(main.url)];
  t.teardown(() => {
    firstClient.close();
    secondClient.close();
  });
  await Promise.all([firstClient.get('/healthz'), secondClient.get('/healthz')]);
  const inFlight = await slowRequestsInFlight(main, 1);
  t.is(await crashy(main, '/emitter-error', 'emitter'), 'answered');
  t.true(await until(() => fatalLine(main, 'emitted with no error listener') !== undefined, 5000), 'the first exception is logged, and the drain starts');
  // Answers say Connection: close from the moment the listener is closed, a few turns of the loop after the drain starts.
  t.true(await until(() => connectionRefused(main.url), 5000), 'the listener is closed');

  const [second, repeated] = await Promise.all([
    firstClient.get('/api/crashy/timer-throw?label=during-the-drain', { 'x-request-id': 'second' }),
    secondClient.get('/api/crashy/repeated-throw', { 'x-request-id': 'repeated' }),
  ]);
  t.like(second, { status: 200, connection: 'close' }, 'served during the drain');
  t.like(repeated, { status: 200, connection: 'close' });
  t.deepEqual(await answers(inFlight), [[200, 'finished']]);
  t.deepEqual(await main.exited, { code: EXIT_AFTER_ESCAPED_EXCEPTION, signal: null });

  t.like(requestFields(fatalLine(main, 'emitted with no error listener')), { msg: 'uncaught exception in a request', requestId: 'emitter', route: 'GET /emitter-error' });
  t.like(requestFields(fatalLine(main, 'during-the-drain')), { msg: 'uncaught exception in a request', requestId: 'second', route: 'GET /timer-throw' });
  t.like(requestFields(fatalLine(main, 'thrown again and again')), { requestId: 'repeated', route: 'GET /repeated-throw' });
  t.is(atLevel(main, FATAL).length, 3, 'each exception once, the repeated one too');
  const repeats = entries(main).find((entry) => entry.msg === 'uncaught exceptions repeated one already logged');
  t.true(Number(repeats?.repeats) > 1, 'the repeats are counted in one line');
  t.is(entries(main).filter((entry) => entry.msg === 'shutting down').length, 1, 'one drain');
});

test('a rejection nobody handles is logged once naming its request, and the service goes on; a microtask\'s throw names its request; one from no request says so', async (t) => {
  const main = await startEscaping(t, { contextFrame: true });
  t.is(await crashy(main, '/floating-rejection', 'floating'), 'answered');
  t.true(await until(() => atLevel(main, ERROR).length > 0, 5000));
  const [rejection] = atLevel(main, ERROR);
  t.deepEqual(requestFields(rejection), {
    msg: 'unhandled promise rejection in a request',
    requestId: 'floating',
    tenant: 'default',
    project: 'crashy',
    route: 'GET /floating-rejection',
  });
  t.regex(rejection?.err?.stack ?? '', /rejected with nobody to catch it.*crashy\/api\/routes\.js/s);
  t.is((await fetch(`${main.url}/healthz`)).status, 200, 'the service goes on');

  const inFlight = await slowRequestsInFlight(main, 1);
  t.is(await crashy(main, '/microtask-throw?ms=1500', 'microtask'), 'answered');
  t.is(await crashy(main, '/arm-outside', 'arming'), 'armed');
  t.deepEqual(await answers(inFlight), [[200, 'finished']]);
  t.deepEqual(await main.exited, { code: EXIT_AFTER_ESCAPED_EXCEPTION, signal: null });
  t.deepEqual(requestFields(fatalLine(main, 'thrown by a timer no request started')), {
    msg: 'uncaught exception outside any request',
    requestId: undefined,
    tenant: undefined,
    project: undefined,
    route: undefined,
  });
  t.like(requestFields(fatalLine(main, 'thrown from a microtask')), { msg: 'uncaught exception in a request', requestId: 'microtask' });
  t.is(atLevel(main, ERROR).length, 1, 'the rejection logged once');
});

test('without AsyncContextFrame, a timer\'s throw and a rejection still name their request; a microtask\'s throw cannot', async (t) => {
  const main = await startEscaping(t, { contextFrame: false });
  t.is(await crashy(main, '/floating-rejection', 'floating'), 'answered');
  t.true(await until(() => atLevel(main, ERROR).length > 0, 5000));
  t.like(requestFields(atLevel(main, ERROR)[0]), { msg: 'unhandled promise rejection in a request', requestId: 'floating' });

  const inFlight = await slowRequestsInFlight(main, 1);
  t.is(await crashy(main, '/microtask-throw?ms=1500', 'microtask'), 'answered');
  t.is(await crashy(main, '/timer-throw', 'crash-by-timer'), 'answered');
  t.deepEqual(await answers(inFlight), [[200, 'finished']]);
  t.deepEqual(await main.exited, { code: EXIT_AFTER_ESCAPED_EXCEPTION, signal: null });
  t.like(requestFields(fatalLine(main, 'thrown from a timer')), { msg: 'uncaught exception in a request', requestId: 'crash-by-timer', route: 'GET /timer-throw' });
  // Node runs a queueMicrotask callback's throw through its fatal-exception path with no async
  // context left (AsyncLocalStorage over async_hooks): the README says so.
  t.like(requestFields(fatalLine(main, 'thrown from a microtask')), { msg: 'uncaught exception outside any request', requestId: undefined });
});
