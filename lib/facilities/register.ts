import { resolveFacilitiesFromAnywhere } from './resolution.ts';

/**
 * For `node --import`: a process other than the service (a child that re-imports a route file
 * to locate its syntax error) resolves `spaceport` the way the service does.
 */
resolveFacilitiesFromAnywhere();
