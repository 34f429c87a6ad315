import test from 'ava';
import { call, callerWith, newTenant, type Caller, type CallResult } from '../helpers/spaces.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

// A space may hold 1 000 schemas of 128 characters, and each of its events holds them twice
// (before and after): a page of 1 000 such events was a 260 MB answer, built whole in memory
// (1.3 GB of RSS, the event loop held 0.8 s), which one tenant's admin could ask for again and
// again. A page now holds as many events as fit its size, at least one; `before` pages on.

let service: ServiceUnderTest;
let boss: Caller;
const UPDATES = 30;

serviceForFile({ expert: { spaces: { enabled: true } } }, async (started) => {
  service = started;
  const tenant = await newTenant(service);
  boss = await callerWith(service, tenant, { username: 'boss', role: 'admin' });
  const created = await call(service, 'POST', '/spaces', { as: boss, json: { name: 'wide', schemas: schemasOf('created') } });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  for (let update = 0; update < UPDATES; update++) {
    const replaced = await call(service, 'PUT', '/spaces/wide', { as: boss, json: { schemas: schemasOf(`update-${update}`) } });
    if (replaced.status !== 200) throw new Error(`update answered ${replaced.status}`);
  }
});

/** The most schemas a space may hold, each of the most characters. */
function schemasOf(tag: string): string[] {
  return Array.from({ length: 1000 }, (_, index) => `${tag}-${index}-`.padEnd(128, 'x'));
}

interface Event {
  action: string;
  at: string;
  after?: { schemas: string[] } | null;
}

/** Every page from the newest on, following `before`; the size of each answer. */
async function allPages(path: string): Promise<{ pages: Event[][]; sizes: number[]; totals: unknown[] }> {
  const pages: Event[][] = [];
  const sizes: number[] = [];
  const totals: unknown[] = [];
  let before = '';
  for (;;) {
    const answer: CallResult = await call(service, 'GET', `${path}?limit=1000${before}`, { as: boss });
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
    const events = answer.body.data as Event[];
    if (events.length === 0) break;
    pages.push(events);
    sizes.push(JSON.stringify(answer.body).length);
    totals.push(answer.body.total);
    before = `&before=${encodeURIComponent((events.at(-1) as Event).at)}`;
  }
  return { pages, sizes, totals };
}

const MOST_CHARS = 4 * 1024 * 1024;

/** The paths, and the events they show beyond the space's: the audit has the admin's account.created too. */
const PATHS: Array<[string, number]> = [
  ['/spaces/wide/history', 0],
  ['/audit', 1],
];

for (const [path, others] of PATHS) {
  test(`GET ${path} of events holding 1 000 schemas each: pages of bounded size, paging through all of them by before, none skipped or repeated`, async (t) => {
    const { pages, sizes, totals } = await allPages(path);
    t.log(`${pages.length} pages of ${pages.map((page) => page.length).join(', ')} events, the largest ${Math.max(...sizes)} characters`);
    t.true(Math.max(...sizes) < MOST_CHARS, `an answer of ${Math.max(...sizes)} characters`);
    t.true(pages.length > 1, 'more than one page');
    const all = pages.flat();
    t.is(all.length, UPDATES + 1 + others);
    t.deepEqual(new Set(totals), new Set([UPDATES + 1 + others]), 'total counts every event on every page');
    const events = all.filter((event) => event.after !== undefined);
    const tags = events.map((event) => event.after?.schemas[0]?.replace(/-0-x*$/, ''));
    t.deepEqual(tags, [...Array.from({ length: UPDATES }, (_, update) => `update-${UPDATES - 1 - update}`), 'created']);
  });
}
