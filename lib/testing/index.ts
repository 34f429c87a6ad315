/**
 * `spaceport/testing`: the real service with one project, for that project's own tests
 * (SPEC §8.8). Nothing else of the service needs importing:
 *
 * ```js
 * import test from 'ava';
 * import { start } from 'spaceport/testing';
 *
 * const app = await start({ project: 'shop', settings: { apiKey: 'k' } });
 * test.after.always(() => app.close());
 *
 * test('lists the notes of the caller', async (t) => {
 *   const response = await app.get('/api/shop/notes', { as: app.user });
 *   t.is(response.status, 200);
 * });
 * ```
 */
export { start, type StartOptions, type TestCaller, type TestService } from './service.ts';
export type { TestRequestInit, Caller } from './requests.ts';
export type { TestUser, UserFields } from './users.ts';
export type { LogEntry } from './logs.ts';
export type { TokenClaims } from '../auth/tokens.ts';
export type { DocumentStore } from '../documents/index.ts';
