import { signSystemToken, verifySystemToken, type TokenClaims, type TokenSubject } from '../auth/tokens.ts';
import { currentRequest } from '../core/request-state.ts';
import { currentRuntime } from './current.ts';

export type { TokenClaims, TokenSubject };

/**
 * Issues a system JWT for an account (SPEC §5.4): its `uid`, `_id` or `id`, `username` and
 * `role`, for the current request's tenant. Outside a request the account must name its tenant;
 * inside one, an account naming another tenant is refused (TypeError).
 */
export async function signToken(account: TokenSubject): Promise<string> {
  return signSystemToken(currentRuntime(), account, currentRequest()?.tenant);
}

/**
 * Returns the claims of a valid system JWT (HS256, not expired), or throws. Inside a request the
 * token must also be of the request's tenant, as for system authentication (SPEC §5.3); outside
 * one (a timer a route file started) any tenant's token passes.
 */
export function verifyToken(token: string): TokenClaims {
  const request = currentRequest();
  return verifySystemToken(request?.runtime ?? currentRuntime(), token, request);
}
