export { loadConfig, ConfigError, type LoadOptions } from './load.ts';
export { durationSeconds } from './duration.ts';
export type { Config, Secrets, LoadedConfig, ProjectSettingSources } from './types.ts';
export type { ExpertInput } from './schema.ts';
