import createError from 'http-errors';
import type { Middleware } from 'koa';
import { requestState } from '../core/request-state.ts';
import { clientGroup } from '../ratelimit/client-address.ts';
import { checkedBody } from '../routes/service-area.ts';
import type { Runtime } from '../core/runtime.ts';
import { accountFromDocument, findAccountDocument } from './accounts.ts';
import { assertHashingCapacity, prepareDecoyHash, verifyPassword } from './passwords.ts';
import { signSystemToken, tokenLifetimeSeconds } from './tokens.ts';

interface Credentials {
  username: string;
  password: string;
}

/** One answer for an unknown name and a wrong password, so neither can be told apart. */
const REJECTED = 'invalid username or password';

/** `POST /auth/login` (SPEC §5.2): the body is rate-limited, read and checked before this runs. */
export function loginHandler(runtime: Runtime): Middleware {
  void prepareDecoyHash();
  const clientOf = clientGroup(runtime.config.rateLimit.ipv6Prefix);
  return async (ctx) => {
    const { username, password } = checkedBody<Credentials>(ctx);
    const tenant = requestState(ctx).tenant as string;
    const caller = { tenant, client: clientOf(ctx.ip) };
    assertHashingCapacity(caller);
    const document = await findAccountDocument(runtime.tenantDatabase, tenant, username);
    const matches = await verifyPassword(password, document?.password, caller);
    if (document === undefined || !matches) throw createError(401, REJECTED);
    const account = accountFromDocument(document);
    // The token names the account, never a tenant the account document might carry.
    const token = await signSystemToken(runtime, { uid: account.uid, username: account.username, role: account.role }, tenant);
    ctx.body = { success: true, token, expiresIn: tokenLifetimeSeconds(token) };
  };
}
