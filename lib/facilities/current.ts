import type { Config } from '../config/index.ts';
import type { Runtime } from '../core/runtime.ts';
import { currentRequest } from '../core/request-state.ts';

/**
 * The service (or command) this process runs, for facility calls made outside a request: a route
 * file reading `config` at import time, a timer started by a handler. Inside a request the
 * request's state names the runtime, so several services in one process stay apart.
 */
let processRuntime: Runtime | undefined;
let processConfig: Config | undefined;

/** Called by the service before it imports route files. */
export function adoptRuntime(runtime: Runtime): void {
  processRuntime = runtime;
  processConfig = runtime.config;
}

/** Called by commands that import route files without a running service (`make routes`). */
export function adoptConfig(config: Config): void {
  processConfig = config;
}

export function currentRuntime(): Runtime {
  const runtime = currentRequest()?.runtime ?? processRuntime;
  if (runtime === undefined) throw new Error('spaceport: this facility needs the running service');
  return runtime;
}

export function currentConfig(): Config {
  const config = currentRequest()?.runtime?.config ?? processConfig;
  if (config === undefined) throw new Error('spaceport: the configuration is read once the service has loaded it');
  return config;
}
