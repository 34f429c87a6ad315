import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { createTenant } from '../../lib/tenancy/index.ts';
import { testKnex } from '../helpers/database.ts';
import { latencyRelay } from '../helpers/latency-relay.ts';
import { until } from '../helpers/main-process.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess, type ServiceProcess, type ServiceProcessOptions } from '../helpers/service-process.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * Traces (SPEC §16.2), from a real service process to a real OTLP/HTTP receiver on loopback:
 * the request's server span, its statements and outgoing calls as its children, an incoming
 * `traceparent` continued, the trace on the log line; and nothing of OpenTelemetry loaded when
 * the variables do not ask for traces.
 */

const SERVER = 2;
const CLIENT = 3;
const INCOMING_TRACE = '0af7651916cd43dd8448eb211c80319c';
const INCOMING_PARENT = 'b7ad6b7169203331';
const MODULE_LOG = fileURLToPath(new URL('../helpers/module-log.ts', import.meta.url));
const TRACED_PROJECTS = fileURLToPath(new URL('../fixtures/projects/traced', import.meta.url));

test.after.always(dropTestDatabase);

/** A loopback server answering like the SSO server (`{employeeId}`), keeping the headers of each call. */
async function startPeer(t: ExecutionContext): Promise<{ url: string; calls: IncomingHttpHeaders[] }> {
  const calls: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    calls.push(request.headers);
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"employeeId":"nobody-here"}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

async function tracedService(t: ExecutionContext, receiver: OtlpReceiver, options: Partial<ServiceProcessOptions> = {}): Promise<ServiceProcess> {
  return startServiceProcess(t, {
    databaseUrl: await testDatabaseUrl(),
    ...options,
    // Every new trace recorded, unless a test says otherwise: the service's own default records one in ten.
    environment: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_TRACES_SAMPLER: 'parentbased_always_on', ...options.environment },
  });
}

async function receiverFor(t: ExecutionContext): Promise<OtlpReceiver> {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  return receiver;
}

/** Waits for the spans of trace `traceId` until `complete` holds of them. */
async function spansOf(receiver: OtlpReceiver, traceId: string, complete: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  const ofTrace = () => receiver.spans.filter((span) => span.traceId === traceId);
  await until(() => complete(ofTrace()), 10_000);
  return ofTrace();
}

function isStatement(span: ReceivedSpan): boolean {
  return span.attributes['db.system.name'] === 'postgresql';
}

function isOutgoingCall(span: ReceivedSpan): boolean {
  return span.kind === CLIENT && !isStatement(span);
}

/** The request line of `url`, once the service has written it (its output is flushed every quarter second). */
async function requestLine(service: ServiceProcess, url: string): Promise<Record<string, unknown> | undefined> {
  const line = () => service.logEntries().find((entry) => entry.msg === 'request' && entry.url === url);
  await until(() => line() !== undefined, 5000);
  return line();
}

test.serial('a request is one server span named by its route, its statements and its SSO call are its children, and it continues an incoming traceparent', async (t) => {
  const receiver = await receiverFor(t);
  const sso = await startPeer(t);
  const service = await tracedService(t, receiver, { expert: { sso: { authUrl: sso.url } } });

  const response = await fetch(`${service.url}/api/sample/home?usertoken=employee:secret-token-value`, {
    headers: { traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01`, 'x-request-id': 'caller-chosen-1' },
  });
  await response.arrayBuffer();

  const spans = await spansOf(receiver, INCOMING_TRACE, (found) => found.some((span) => span.kind === SERVER) && found.some(isStatement) && found.some(isOutgoingCall));
  const server = spans.find((span) => span.kind === SERVER);
  if (server === undefined) return t.fail(`no server span among ${JSON.stringify(spans)}`);
  t.is(server.name, 'GET sample /home');
  t.is(server.parentSpanId, INCOMING_PARENT);
  t.is(server.serviceName, 'spaceport');
  t.like(server.attributes, {
    'http.request.method': 'GET',
    'http.route': '/api/sample/home',
    'url.path': '/api/sample/home',
    'url.scheme': 'http',
    'http.response.status_code': response.status,
    // Who chose the id (SPEC §17.5): a caller may send any well-formed one.
    'spaceport.request_id': 'caller-chosen-1',
    'spaceport.request_id_from': 'caller',
  });
  t.false(JSON.stringify(server).includes('secret-token-value'), 'the query, which may hold a credential, is not recorded');

  const statements = spans.filter(isStatement);
  t.true(statements.length > 0);
  for (const statement of statements) {
    t.is(statement.parentSpanId, server.spanId);
    t.is(statement.kind, CLIENT);
    t.is(statement.attributes['db.system'], 'postgresql');
    t.is(typeof statement.attributes['db.query.text'], 'string');
  }
  const lookup = statements.find((span) => String(span.attributes['db.query.text']).includes('account_username = $'));
  if (lookup === undefined) return t.fail(`no statement on accounts among ${JSON.stringify(statements)}`);
  t.is(lookup.name, 'SELECT');
  t.false(JSON.stringify(lookup).includes('nobody-here'), 'the username it looked for is a bound value, not in the span');

  const outgoing = spans.find(isOutgoingCall);
  if (outgoing === undefined) return t.fail(`no outgoing call span among ${JSON.stringify(spans)}`);
  t.is(outgoing.parentSpanId, server.spanId);
  t.is(outgoing.attributes['http.request.method'], 'POST');
  t.is(sso.calls[0]?.traceparent, `00-${INCOMING_TRACE}-${outgoing.spanId}-01`);

  const line = await requestLine(service, '/api/sample/home?usertoken=[redacted]');
  t.like(line, { traceId: INCOMING_TRACE, spanId: server.spanId });
  t.true(receiver.contentTypes.every((type) => type.startsWith('application/json')));
});

test.serial('a handler calling out with node:http (a named import) gets a client span and sends traceparent; system routes are named by their path', async (t) => {
  const receiver = await receiverFor(t);
  const peer = await startPeer(t);
  const service = await tracedService(t, receiver, {
    projectsDir: TRACED_PROJECTS,
    expert: { projects: { default: 'relay' } },
    environment: { OTEL_SERVICE_NAME: 'relay-service' },
  });

  const relayed = await fetch(`${service.url}/api/relay/relay?to=${encodeURIComponent(`${peer.url}/hello`)}`);
  t.is(relayed.status, 200);
  const traceparent = String(peer.calls[0]?.traceparent);
  const traceId = traceparent.split('-')[1] ?? '';
  const spans = await spansOf(receiver, traceId, (found) => found.some((span) => span.kind === SERVER) && found.some(isOutgoingCall));
  const server = spans.find((span) => span.kind === SERVER);
  const outgoing = spans.find(isOutgoingCall);
  t.is(server?.name, 'GET relay /relay');
  t.is(server?.serviceName, 'relay-service');
  t.is(outgoing?.parentSpanId, server?.spanId);
  t.is(traceparent, `00-${traceId}-${outgoing?.spanId}-01`);
  t.is(spans.filter((span) => span.kind === SERVER).length, 1, 'the service does not trace its own requests twice');

  const health = await fetch(`${service.url}/healthz`);
  await health.arrayBuffer();
  const line = await requestLine(service, '/healthz');
  const healthSpans = await spansOf(receiver, String(line?.traceId), (found) => found.some((span) => span.kind === SERVER));
  t.is(healthSpans.find((span) => span.kind === SERVER)?.name, 'GET /healthz');

  await (await fetch(`${service.url}/no/such/path/42`)).arrayBuffer();
  const unknown = await requestLine(service, '/no/such/path/42');
  const unknownSpans = await spansOf(receiver, String(unknown?.traceId), (found) => found.some((span) => span.kind === SERVER));
  t.like(unknownSpans.find((span) => span.kind === SERVER), { name: 'GET', attributes: { 'http.response.status_code': 404 } });

  await (await fetch(`${service.url}/api/relay/boom`)).arrayBuffer();
  const failed = await requestLine(service, '/api/relay/boom');
  const errorLine = service.logEntries().find((entry) => entry.level === 50 && entry.requestId === failed?.requestId);
  t.like(errorLine, { traceId: failed?.traceId, spanId: failed?.spanId }, 'a line the request logs through pino names its trace too');
  const failedSpans = await spansOf(receiver, String(failed?.traceId), (found) => found.some((span) => span.kind === SERVER));
  t.like(failedSpans.find((span) => span.kind === SERVER), { name: 'GET relay /boom', attributes: { 'http.response.status_code': 500, 'error.type': '500' } });
});

/** What a caller may send besides `traceparent`: a vendor's `tracestate` and its own `baggage`, each near the W3C limits. */
const CALLER_TRACESTATE = Array.from({ length: 30 }, (_, index) => `vendor${index}=${'s'.repeat(12)}`).join(',');
const CALLER_BAGGAGE = Array.from({ length: 60 }, (_, index) => `caller.key${index}=${'b'.repeat(100)}`).join(',');

/** Calls the relay routes of the traced fixture with `node:http` and with `fetch`, as a caller sending all three headers; the headers each call out carried. */
async function relayedHeaders(service: ServiceProcess, peer: { url: string; calls: IncomingHttpHeaders[] }): Promise<IncomingHttpHeaders[]> {
  const headers = { traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01`, tracestate: CALLER_TRACESTATE, baggage: CALLER_BAGGAGE };
  for (const route of ['relay', 'fetch-relay']) {
    const relayed = await fetch(`${service.url}/api/relay/${route}?to=${encodeURIComponent(`${peer.url}/hello`)}`, { headers });
    await relayed.arrayBuffer();
    if (relayed.status !== 200) throw new Error(`${route} answered ${relayed.status}`);
  }
  return peer.calls;
}

test.serial('outgoing calls carry traceparent but neither the caller\'s tracestate nor its baggage, and the server span keeps no tracestate of the caller', async (t) => {
  const receiver = await receiverFor(t);
  const peer = await startPeer(t);
  const service = await tracedService(t, receiver, { projectsDir: TRACED_PROJECTS, expert: { projects: { default: 'relay' } } });

  const calls = await relayedHeaders(service, peer);
  t.is(calls.length, 2);
  for (const call of calls) {
    t.regex(String(call.traceparent), new RegExp(`^00-${INCOMING_TRACE}-[0-9a-f]{16}-01$`), 'the trace goes on');
    t.is(call.tracestate, undefined, 'no tracestate: the service adds no entry of its own, and the caller\'s stay here');
    t.is(call.baggage, undefined, 'no baggage unless OTEL_PROPAGATORS asks for it');
  }
  const spans = await spansOf(receiver, INCOMING_TRACE, (found) => found.filter((span) => span.kind === SERVER).length === 2);
  for (const server of spans.filter((span) => span.kind === SERVER)) {
    t.is(server.parentSpanId, INCOMING_PARENT);
    t.is(server.traceState, '');
  }
});

test.serial('OTEL_PROPAGATORS=tracecontext,baggage forwards the caller\'s baggage (within W3C\'s limits), still not its tracestate', async (t) => {
  const receiver = await receiverFor(t);
  const peer = await startPeer(t);
  const service = await tracedService(t, receiver, {
    projectsDir: TRACED_PROJECTS,
    expert: { projects: { default: 'relay' } },
    environment: { OTEL_PROPAGATORS: 'tracecontext, baggage' },
  });
  const calls = await relayedHeaders(service, peer);
  for (const call of calls) {
    t.regex(String(call.traceparent), new RegExp(`^00-${INCOMING_TRACE}-`));
    t.is(call.tracestate, undefined);
    t.is(call.baggage, CALLER_BAGGAGE);
  }
});

test.serial('OTEL_PROPAGATORS=none continues no trace and sends none on', async (t) => {
  const receiver = await receiverFor(t);
  const peer = await startPeer(t);
  const service = await tracedService(t, receiver, { projectsDir: TRACED_PROJECTS, expert: { projects: { default: 'relay' } }, environment: { OTEL_PROPAGATORS: 'none' } });
  const calls = await relayedHeaders(service, peer);
  for (const call of calls) {
    t.is(call.traceparent, undefined);
    t.is(call.tracestate, undefined);
    t.is(call.baggage, undefined);
  }
  await until(() => receiver.spans.some((span) => span.kind === SERVER), 10_000);
  t.false(receiver.spans.some((span) => span.traceId === INCOMING_TRACE), 'the caller\'s trace is not continued');
});

test.serial('an OTEL_PROPAGATORS naming a propagator the service lacks stops start-up, naming the variable', async (t) => {
  const environment = { ...process.env, PORT: '0', DATABASE_URL: await testDatabaseUrl(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_PROPAGATORS: 'tracecontext,b3' };
  const started = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(process.execPath, ['lib/main.ts'], { env: environment, encoding: 'utf8', timeout: 30_000 }, (error, _stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr });
    });
  });
  t.is(started.code, 1);
  t.is(started.stderr.trim(), 'configuration error: environment variable OTEL_PROPAGATORS: "b3" is not one of tracecontext, baggage, none');
});

test.serial('spans still waiting for their batch are sent when the service stops on SIGTERM', async (t) => {
  const receiver = await receiverFor(t);
  const service = await tracedService(t, receiver, { environment: { OTEL_BSP_SCHEDULE_DELAY: '600000' } });
  await (await fetch(`${service.url}/api/sample/heartbeat`)).arrayBuffer();
  const line = await requestLine(service, '/api/sample/heartbeat');
  t.deepEqual(receiver.spans, []);
  t.like(await service.stop(), { code: 0 });
  t.is(receiver.spans.find((span) => span.kind === SERVER && span.traceId === line?.traceId)?.name, 'GET sample /heartbeat');
});

/** The `traceparent` a relay route of the traced fixture sent on, called with `traceparent` (or none). */
async function relayedTraceparent(service: ServiceProcess, peer: { url: string; calls: IncomingHttpHeaders[] }, traceparent?: string): Promise<string> {
  const calls = peer.calls.length;
  const relayed = await fetch(`${service.url}/api/relay/relay?to=${encodeURIComponent(`${peer.url}/hello`)}`, { headers: traceparent === undefined ? {} : { traceparent } });
  await relayed.arrayBuffer();
  return String(peer.calls[calls]?.traceparent);
}

const UNSAMPLED_TRACE = '1bf7651916cd43dd8448eb211c80319d';

test.serial('without OTEL_TRACES_SAMPLER, a caller\'s sampled traceparent is recorded, its unsampled one is not, and new traces at OTEL_TRACES_SAMPLER_ARG\'s ratio: 0 records none, yet their log lines name the trace and calls out carry it', async (t) => {
  const receiver = await receiverFor(t);
  const peer = await startPeer(t);
  const service = await tracedService(t, receiver, {
    projectsDir: TRACED_PROJECTS,
    expert: { projects: { default: 'relay' } },
    environment: { OTEL_TRACES_SAMPLER: '', OTEL_TRACES_SAMPLER_ARG: '0' },
  });

  const unsampled = await relayedTraceparent(service, peer, `00-${UNSAMPLED_TRACE}-${INCOMING_PARENT}-00`);
  t.regex(unsampled, new RegExp(`^00-${UNSAMPLED_TRACE}-[0-9a-f]{16}-00$`), 'the caller\'s trace goes on, unsampled');
  const fresh = await relayedTraceparent(service, peer);
  t.regex(fresh, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/, 'a new trace is sent on, unsampled');
  const freshTrace = fresh.split('-')[1];
  const namesTrace = () => service.logEntries().some((entry) => entry.msg === 'request' && entry.traceId === freshTrace);
  t.true(await until(namesTrace, 5000), 'the request line of the unrecorded new trace names it');

  const sampled = await relayedTraceparent(service, peer, `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01`);
  t.regex(sampled, new RegExp(`^00-${INCOMING_TRACE}-[0-9a-f]{16}-01$`));
  const spans = await spansOf(receiver, INCOMING_TRACE, (found) => found.some((span) => span.kind === SERVER) && found.some(isOutgoingCall));
  t.is(spans.find((span) => span.kind === SERVER)?.parentSpanId, INCOMING_PARENT);
  // Exported after the unrecorded requests' spans would have been: in batches, in order.
  t.deepEqual(receiver.spans.filter((span) => span.traceId !== INCOMING_TRACE), []);
});

/** How many of `count` heartbeats without a `traceparent` the receiver got server spans of; a sampled caller's request marks the end. */
async function recordedHeartbeats(receiver: OtlpReceiver, service: ServiceProcess, count: number): Promise<number> {
  for (let sent = 0; sent < count; sent += 1) await (await fetch(`${service.url}/api/sample/heartbeat`)).arrayBuffer();
  await (await fetch(`${service.url}/api/sample/heartbeat`, { headers: { traceparent: `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01` } })).arrayBuffer();
  await spansOf(receiver, INCOMING_TRACE, (found) => found.some((span) => span.kind === SERVER));
  return receiver.spans.filter((span) => span.kind === SERVER && span.traceId !== INCOMING_TRACE).length;
}

test.serial('by default one new trace in ten is recorded (300 requests: 10 to 60, a chance of about 1 in 10 000 to fall outside)', async (t) => {
  const receiver = await receiverFor(t);
  const service = await tracedService(t, receiver, { environment: { OTEL_TRACES_SAMPLER: '', OTEL_TRACES_SAMPLER_ARG: '' } });
  const recorded = await recordedHeartbeats(receiver, service, 300);
  t.true(recorded >= 10 && recorded <= 60, `${recorded} of 300 recorded`);
});

test.serial('OTEL_TRACES_SAMPLER=always_on records every request', async (t) => {
  const receiver = await receiverFor(t);
  const service = await tracedService(t, receiver, { environment: { OTEL_TRACES_SAMPLER: 'always_on' } });
  t.is(await recordedHeartbeats(receiver, service, 30), 30);
});

/** The service's module URLs, as a process started with `environment` resolved them serving one request. */
async function modulesLoaded(t: ExecutionContext, environment: Record<string, string>): Promise<string[]> {
  const log = path.join(scratchFolder('modules'), 'modules.txt');
  const service = await startServiceProcess(t, {
    databaseUrl: await testDatabaseUrl(),
    environment: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${MODULE_LOG}`, SPACEPORT_MODULE_LOG: log, ...environment },
  });
  await (await fetch(`${service.url}/api/sample/heartbeat`)).arrayBuffer();
  await service.stop();
  return readFileSync(log, 'utf8').split('\n');
}

test.serial('without the OTEL variables, or with the SDK disabled, no OpenTelemetry module is loaded', async (t) => {
  const receiver = await receiverFor(t);
  const off = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', OTEL_SDK_DISABLED: '' };
  for (const environment of [off, { ...off, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' }]) {
    const modules = await modulesLoaded(t, environment);
    t.true(modules.some((url) => url.includes('/lib/server.ts')), 'the log saw the service load');
    t.deepEqual(modules.filter((url) => url.includes('@opentelemetry') || url.includes('-in-the-middle')), []);
    t.deepEqual(modules.filter((url) => url.includes('/lib/tracing/') && !url.endsWith('/switch.ts')), []);
    // prom-client loads OpenTelemetry's API for its exemplars: it is imported only with METRICS_TOKEN.
    t.deepEqual(modules.filter((url) => url.includes('/prom-client/')), []);
  }
  t.deepEqual(receiver.spans, []);
  const on = await modulesLoaded(t, { ...off, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  t.true(on.some((url) => url.includes('@opentelemetry/sdk-trace-node')), 'with traces on the same log sees OpenTelemetry');
});

test.serial("a tenant name looked up in a batch another request started is a statement of its own request's trace, not of that one's", async (t) => {
  // Names not yet known are looked up together, one statement at a time: the names asked while
  // one is under way go in the next, which the same loop sends. Before, that loop ran in the first
  // caller's context, so a later request's lookup was a span of another request's trace.
  const receiver = await receiverFor(t);
  const direct = await testDatabaseUrl();
  const owner = testKnex(direct);
  t.teardown(() => owner.destroy());
  for (const tenant of ['batch-first', 'batch-second']) await createTenant(owner, tenant);
  const relay = await latencyRelay(direct, 150);
  t.teardown(() => relay.close());
  const service = await tracedService(t, receiver, { databaseUrl: relay.url, environment: { DATABASE_DIRECT_URL: direct } });
  const traces = { 'batch-first': '1af7651916cd43dd8448eb211c80319c', 'batch-second': '2af7651916cd43dd8448eb211c80319c' };
  const ask = (tenant: keyof typeof traces) =>
    fetch(`${service.url}/api/sample/home`, { headers: { tenant, traceparent: `00-${traces[tenant]}-${INCOMING_PARENT}-01` } }).then((response) => response.arrayBuffer());
  const first = ask('batch-first');
  // Sent while the first one's lookup is on its way (600 ms and more through the relay).
  await new Promise((resolve) => setTimeout(resolve, 150));
  await Promise.all([first, ask('batch-second')]);
  const lookups = (traceId: string) =>
    spansOf(receiver, traceId, (found) => found.some((span) => span.kind === SERVER)).then((spans) => spans.filter((span) => isStatement(span) && String(span.attributes['db.query.text']).includes('from tenants')).length);
  t.deepEqual({ first: await lookups(traces['batch-first']), second: await lookups(traces['batch-second']) }, { first: 1, second: 1 });
});
