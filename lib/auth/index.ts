export { systemAuthentication } from './system-auth.ts';
export { signSystemToken, verifySystemToken, tokenLifetimeSeconds, type TokenClaims, type TokenSubject } from './tokens.ts';
export { authRoutes } from './routes.ts';
export { findAccountByUid, findAccountByUsername, saveAccount, type Account, type AccountInput } from './accounts.ts';
