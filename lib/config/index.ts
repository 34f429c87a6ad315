export { loadConfig, ConfigError, type LoadOptions } from './load.ts';
export type { Config, Secrets, LoadedConfig } from './types.ts';
export type { ExpertInput } from './schema.ts';
