import type { Config } from '../config/index.ts';
import { currentFacilityState } from './current.ts';

/** Every key of the resolved configuration; the compiler keeps the list whole and exact. */
const CONFIG_KEYS: Record<keyof Config, true> = {
  spaces: true,
  tenancy: true,
  referer: true,
  projects: true,
  rateLimit: true,
  http: true,
  cors: true,
  auth: true,
  sso: true,
  limits: true,
  port: true,
  host: true,
  projectsDir: true,
  dataDir: true,
  logLevel: true,
  database: true,
  redis: true,
};

/**
 * The configuration of the service serving the current request, or that imported the code
 * reading it (SPEC §3, §8.5), deeply frozen. Its keys read through to that service's, for a
 * route module is loaded once per process and one process may run several services (tests, benchmarks).
 */
export const configView: Config = Object.freeze(
  Object.defineProperties(
    {} as Config,
    Object.fromEntries(Object.keys(CONFIG_KEYS).map((key) => [key, { enumerable: true, get: () => currentFacilityState().config[key as keyof Config] }])),
  ),
);
