import type { Config } from '../config/index.ts';
import { currentConfig } from './current.ts';

const refuse = (): boolean => false;

/**
 * The configuration of the service serving the current request (SPEC §3, §8.5): reads go to
 * that service's deeply frozen config, writes fail as they would on a frozen object. A view,
 * not a copy, because one process may run several services (tests, benchmarks).
 */
export const configView: Config = new Proxy({} as Config, {
  get: (_target, key) => Reflect.get(currentConfig(), key),
  has: (_target, key) => Reflect.has(currentConfig(), key),
  ownKeys: () => Reflect.ownKeys(currentConfig()),
  getOwnPropertyDescriptor: (_target, key) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(currentConfig(), key);
    return descriptor && { value: descriptor.value, enumerable: descriptor.enumerable, writable: false, configurable: true };
  },
  set: refuse,
  defineProperty: refuse,
  deleteProperty: refuse,
  setPrototypeOf: refuse,
});
