import { currentRequest } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';

/** What facilities read of a service: `make routes` loads route files with these alone. */
export type FacilityState = Pick<Runtime, 'config' | 'projectSettings'>;

/**
 * The service (or command) this process runs, for facility calls made outside a request: a route
 * file reading `config` or its settings at import time, a timer started by a handler. A route
 * module is imported once per process, so it cannot be handed its service: outside a request
 * this process-level value is the only way to it. Inside a request the request's state names the
 * runtime, so several services in one process (tests, benchmarks) stay apart.
 *
 * Set by `createRuntime` (the last runtime made wins: a test process makes several) and by
 * `make routes`, which imports route files without a runtime. Nothing else writes it.
 */
let outsideRequests: Runtime | FacilityState | undefined;

/** What facility calls outside a request read from now on: a runtime, or (`make routes`) its facility state alone. */
export function serveFacilitiesOutsideRequests(service: Runtime | FacilityState): void {
  outsideRequests = service;
}

export function currentRuntime(): Runtime {
  const runtime = currentRequest()?.runtime ?? (outsideRequests !== undefined && 'tenantDatabase' in outsideRequests ? outsideRequests : undefined);
  if (runtime === undefined) throw new Error('spaceport: this facility needs the running service');
  return runtime;
}

/** The configuration and project settings of the request's service, else of the process's. */
export function currentFacilityState(): FacilityState {
  const state = currentRequest()?.runtime ?? outsideRequests;
  if (state === undefined) throw new Error('spaceport: the configuration is read once the service has loaded it');
  return state;
}
