export { systemAuthentication } from './system-auth.ts';
export { signSystemToken, verifySystemToken, tokenLifetimeSeconds, type TokenClaims, type TokenSubject } from './tokens.ts';
export { authRoutes } from './routes.ts';
