export { loadConfig, ConfigError, type LoadOptions } from './load.ts';
export { durationSeconds } from './duration.ts';
export type { Config, Secrets, LoadedConfig, ProjectSettingSources } from './types.ts';
export { DEFAULT_DATA_DIR, type ExpertInput } from './schema.ts';
