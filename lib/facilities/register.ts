import { resolveFacilitiesFromAnywhere } from './resolution.ts';

/**
 * For `node --import`: a process other than the service (a child that re-imports a route file
 * to locate its syntax error) resolves `spaceport`, and loads the files of PROJECTS_DIR, the way
 * the service does.
 */
resolveFacilitiesFromAnywhere(process.env.PROJECTS_DIR || 'projects');
