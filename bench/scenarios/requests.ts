import type autocannon from 'autocannon';
import type { LoadTarget } from '../harness/load.ts';
import type { TokenSupply } from '../harness/tokens.ts';

/** The requests each measurement sends, built for whichever server is under load. */

export function heartbeat(origin: string): LoadTarget {
  return { origin, requests: [{ method: 'GET', path: '/api/sample/heartbeat' }], expect: { status: 200, bodyIncludes: 'success' } };
}

/** The benchmark fixture's public route, or its system-auth twin when a token is given. */
export function fixtureRoute(origin: string, token?: string): LoadTarget {
  const request = token
    ? { method: 'GET', path: '/api/benchmark/private', headers: { authorization: `Bearer ${token}` } }
    : { method: 'GET', path: '/api/benchmark/public' };
  return { origin, requests: [request], expect: { status: 200, bodyIncludes: 'success' } };
}

/**
 * The fixture's system-auth route with a token from `supply` on every request, none seen before
 * as long as the supply lasts: each request pays for full verification, no cache can answer.
 * With `asPublic`, the same requests (the token in a header the route ignores) go to the public
 * route: the load generator then does the same work per request for both, so that the ratio
 * measures the service's verification, not the generator's own cost of a new header each time.
 */
export function fixtureRouteWithFreshTokens(origin: string, supply: TokenSupply, asPublic = false): LoadTarget {
  const request = {
    method: 'GET',
    path: asPublic ? '/api/benchmark/public' : '/api/benchmark/private',
    setupRequest: (sent: autocannon.Request) => ({ ...sent, headers: { ...sent.headers, [asPublic ? 'x-ignored' : 'authorization']: `Bearer ${supply.next()}` } }),
  };
  return { origin, requests: [request], expect: { status: 200, bodyIncludes: 'success' } };
}

/** One getOneAccount per username, in turn: each finds exactly one account. */
export function getOneAccount(origin: string, usernames: readonly string[]): LoadTarget {
  const requests = usernames.map((username) => ({
    method: 'POST',
    path: '/api/sample/getOneAccount',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ EMPLOYEE_ID: username }),
  }));
  return { origin, requests, expect: { status: 200, bodyIncludes: `"username":"${usernames[0]}"` } };
}

export function routedPath(origin: string, path: string): LoadTarget {
  return { origin, requests: [{ method: 'GET', path }], expect: { status: 200, bodyIncludes: 'ok' } };
}

/** Several targets on one server as a single stream: each connection sends their requests in turn. */
export function mixed(origin: string, targets: readonly LoadTarget[]): LoadTarget {
  const [first] = targets;
  if (first === undefined) throw new Error('mixed: no target');
  return { origin, requests: targets.flatMap((target) => target.requests), expect: first.expect };
}

/** One page of a range of scores per start, in turn (item 7): each answers 20 documents. */
export function eventsRange(origin: string, starts: readonly number[]): LoadTarget {
  const requests = starts.map((from) => ({ method: 'GET', path: `/api/benchmark/events/${from}` }));
  return { origin, requests, expect: { status: 200, bodyIncludes: '"score":' } };
}
