import { AsyncLocalStorage } from 'node:async_hooks';
import { currentRequest } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';

/** What facilities read of a service: `make routes` loads route files with these alone. */
export type FacilityState = Pick<Runtime, 'config' | 'projectSettings'>;

/**
 * The service a project's code runs for outside a request: a route file reading `config` as it
 * is imported, a timer it starts then. A module is imported once per process, so it cannot be
 * handed its service; the service imports it in this async context instead, which the module's
 * code and what it starts inherit. Inside a request the request's state names the runtime.
 */
const serving = new AsyncLocalStorage<Runtime | FacilityState>();

/**
 * Runs `work` (importing a service's project files) as `service`'s: facility calls made in it,
 * and in the timers and promises it starts, read that service. `make routes` passes its facility state alone.
 */
export function withFacilityState<Result>(service: Runtime | FacilityState, work: () => Result): Result {
  return serving.run(service, work);
}

export function currentRuntime(): Runtime {
  const service = currentRequest()?.runtime ?? serving.getStore();
  if (service === undefined || !isRuntime(service)) throw new Error('spaceport: this facility needs the running service');
  return service;
}

function isRuntime(service: Runtime | FacilityState): service is Runtime {
  return 'tenantDatabase' in service;
}

/** The configuration and project settings of the request's service, else of the service that imported the code. */
export function currentFacilityState(): FacilityState {
  const state = currentRequest()?.runtime ?? serving.getStore();
  if (state === undefined) throw new Error('spaceport: the configuration is read once the service has loaded it');
  return state;
}
