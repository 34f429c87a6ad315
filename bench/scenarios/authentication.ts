import { throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn, type Measurement } from '../harness/load.ts';
import type { ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import { systemToken, TokenSupply } from '../harness/tokens.ts';
import type { BenchContext } from './context.ts';
import { fixtureRoute, fixtureRouteWithFreshTokens } from './requests.ts';

/** Tokens signed for the cold run, per request the warm run managed: the cold one is slower. */
const TOKEN_MARGIN = 1.5;
/** Signing takes about 30 µs a token: this bounds the wait before the cold run. */
const MOST_TOKENS = 300_000;

/**
 * SPEC §14.2: the same answer behind system JWT authentication and on a public route, once with
 * one token reused (the service's verified-token cache answers) and once with a token never seen
 * before on every request (full verification each time); each pair measured in turn, round after
 * round.
 */
export async function authenticationSections(context: BenchContext, service: ChildServer): Promise<Section[]> {
  context.progress(`2. authentication: system JWT route, one token, and the public route, in turn, ${context.settings.rounds} rounds`);
  const [warmRun, openRun] = await measureInTurn(
    [
      { target: fixtureRoute(service.origin, systemToken(context.setup)), server: service },
      { target: fixtureRoute(service.origin), server: service },
    ],
    context.settings,
  );
  const warm: Row = { server: 'spaceport, system JWT (one token)', measurement: warmRun, note: 'GET /api/benchmark/private, the same token on every request' };
  const open: Row = { server: 'spaceport, public', measurement: openRun, note: 'GET /api/benchmark/public (rate limiter instead of JWT)' };
  const [cold, openLikewise] = await coldRows(context, service, warm.measurement);
  return [
    { title: '2a. JWT route, one token', rows: [warm, open], verdicts: [throughputAtLeast(warm, open, 1.0)] },
    { title: '2b. JWT route, new tokens', rows: [cold, openLikewise], verdicts: [throughputAtLeast(cold, openLikewise, 0.8)] },
  ];
}

/**
 * The cold run and its public twin, driven alike: the same supply of fresh tokens, one a request,
 * in `Authorization` for the JWT route and in a header the public route ignores.
 */
async function coldRows(context: BenchContext, service: ChildServer, warm: Measurement): Promise<[Row, Row]> {
  const { seconds, warmupSeconds, rounds } = context.settings;
  const count = Math.min(MOST_TOKENS, Math.ceil(warm.requestsPerSecond * (seconds + warmupSeconds) * rounds * TOKEN_MARGIN) + 100);
  context.progress(`2. authentication: system JWT route, signing ${count.toLocaleString('en-US')} tokens`);
  const supply = new TokenSupply(context.setup, count, 'sign');
  context.progress(`2. authentication: system JWT route with a new token every request, and the public route driven alike, in turn, ${rounds} rounds`);
  const [measurement, likewise] = await measureInTurn(
    [
      { target: fixtureRouteWithFreshTokens(service.origin, supply), server: service },
      { target: fixtureRouteWithFreshTokens(service.origin, new TokenSupply(context.setup, Math.min(count, 1000), 'reuse'), true), server: service },
    ],
    context.settings,
  );
  const tokens = `${supply.signedBeforehand.toLocaleString('en-US')} tokens signed beforehand`;
  const late = supply.signedLate === 0 ? '' : `, ${supply.signedLate.toLocaleString('en-US')} more as the run needed them (that signing slowed the load generator)`;
  return [
    { server: 'spaceport, system JWT (new token each request)', measurement, note: `${tokens}${late}, none sent twice` },
    { server: 'spaceport, public (driven alike)', measurement: likewise, note: 'GET /api/benchmark/public, a token in an ignored header on every request, as the cold run sends them' },
  ];
}
