import { resolveFacilitiesFromAnywhere } from './resolution.ts';

/** For `node --import`: another process (one locating a route file's syntax error) resolves `spaceport` as the service does. */
resolveFacilitiesFromAnywhere(process.env.PROJECTS_DIR || 'projects');
