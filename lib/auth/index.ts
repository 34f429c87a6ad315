export { systemAuthentication } from './system-auth.ts';
export { signSystemToken, verifySystemToken, tokenLifetimeSeconds, type TokenClaims, type TokenSubject } from './tokens.ts';
export { loginArea } from './routes.ts';
export { findAccountByUid, findAccountByUsername, saveAccount, type Account, type AccountInput } from './accounts.ts';
