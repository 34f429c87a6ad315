export { loadConfig, ConfigError, projectsDirFrom, type LoadOptions } from './load.ts';
export { durationSeconds } from './duration.ts';
export type { Config, Secrets, LoadedConfig, ProjectSettingSources } from './types.ts';
export { DEFAULT_DATA_DIR, IDLE_IN_TRANSACTION_MARGIN_MS, LONGEST_TIMEOUT_MS, type ExpertInput } from './schema.ts';
