import { measure } from '../harness/load.ts';
import type { ChildServer } from '../harness/processes.ts';
import { systemToken } from '../harness/service.ts';
import type { Section } from '../harness/table.ts';
import { fixtureRoute } from './requests.ts';
import type { BenchContext } from './context.ts';

/** SPEC §14.2: the same answer behind system JWT authentication and on a public route. */
export async function authenticationSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress('2. authentication: system JWT route');
  const authenticated = await measure(fixtureRoute(service.origin, systemToken(context.setup)), context.settings);
  context.progress('2. authentication: public route');
  const open = await measure(fixtureRoute(service.origin), context.settings);
  return {
    title: '2. JWT route vs public route',
    rows: [
      { server: 'spaceport, system JWT', measurement: authenticated, note: 'GET /api/benchmark/private' },
      { server: 'spaceport, public', measurement: open, note: 'GET /api/benchmark/public (rate limiter instead of JWT)' },
    ],
  };
}
