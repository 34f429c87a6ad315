import test, { type ExecutionContext } from 'ava';
import { bothAppsForFile, MOUNT, type RouteCase, type RunningApp } from '../helpers/bridge-apps.ts';
import { conditional, CONDITIONAL_FILE_CASE, ERROR_CASES, FILE_CASES, REQUEST_CASES, RESPONSE_CASES, type DifferentialCase } from '../helpers/bridge-cases.ts';
import { answerOf, type Answer } from '../helpers/bridge-compare.ts';
import { MEMBER_CASES } from '../helpers/bridge-member-cases.ts';

/**
 * The bridge against real Express 5.3: every case's functions are mounted in both apps, the same
 * request goes to both, and the answers must agree on status, Content-Type, body, Location and
 * the case's headers. Where Express renders an HTML error page, spaceport's JSON body of SPEC §7
 * is asserted instead (by design).
 */
const ALL_CASES = [...RESPONSE_CASES, ...REQUEST_CASES, ...ERROR_CASES, ...FILE_CASES, ...MEMBER_CASES, CONDITIONAL_FILE_CASE];

const slugs = new Map(ALL_CASES.map((each, index) => [each, `/case${index}`]));
const slugOf = (each: DifferentialCase): string => slugs.get(each) as string;

const routes: RouteCase[] = ALL_CASES.flatMap((each) => {
  const route = { method: each.method ?? 'get', path: `${slugOf(each)}${each.path ?? ''}` } as const;
  const nextRoute = each.nextRoute === undefined ? [] : [{ ...route, handlers: [each.nextRoute] }];
  return [{ ...route, handlers: each.handlers }, ...nextRoute];
});

const apps = bothAppsForFile(routes);

function requestPath(each: DifferentialCase): string {
  const own = each.request?.path ?? each.path ?? '';
  return `${each.mountAs ?? MOUNT}${slugOf(each)}${own}`;
}

function answerFrom(app: RunningApp, each: DifferentialCase, init: RequestInit = each.request?.init ?? {}): Promise<Answer> {
  return answerOf(app, requestPath(each), init, each.headers);
}

async function compare(t: ExecutionContext, each: DifferentialCase, init?: RequestInit): Promise<void> {
  const [expected, actual] = await Promise.all([answerFrom(apps.express(), each, init), answerFrom(apps.bridge(), each, init)]);
  t.is(actual.status, expected.status, 'status');
  if (each.status !== undefined) t.is(actual.status, each.status, 'the status the case shows');
  if (each.spaceportJson === undefined) {
    t.is(actual.type, expected.type, 'content type');
    t.is(actual.body, expected.body, 'body');
  } else {
    t.regex(expected.type ?? '', /^text\/html/, 'Express renders an HTML page here');
    t.is(actual.type, 'application/json; charset=utf-8', 'spaceport answers JSON instead');
    t.deepEqual(JSON.parse(actual.body), each.spaceportJson, 'the JSON body of SPEC §7');
  }
  t.is(actual.location, expected.location, 'Location');
  t.deepEqual(actual.headers, expected.headers, 'headers');
}

test('the case table holds at least 40 handler cases', (t) => {
  t.true(ALL_CASES.length >= 40, `${ALL_CASES.length} cases`);
});

for (const each of ALL_CASES.filter((entry) => entry !== CONDITIONAL_FILE_CASE)) {
  test(`same as Express: ${each.name}`, (t) => compare(t, each));
}

test(`same as Express: ${CONDITIONAL_FILE_CASE.name}`, async (t) => {
  const first = await fetch(`${apps.express().url}${requestPath(CONDITIONAL_FILE_CASE)}`);
  const validator = first.headers.get('etag') ?? '';
  t.truthy(validator);
  await compare(t, CONDITIONAL_FILE_CASE, { headers: conditional(validator) });
  const answer = await answerFrom(apps.bridge(), CONDITIONAL_FILE_CASE, { headers: conditional(validator) });
  t.is(answer.status, 304);
  t.is(answer.body, '');
});
