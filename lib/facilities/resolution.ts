import { registerHooks } from 'node:module';

/**
 * The two specifiers route files import, mapped to this folder's files. A project anywhere on
 * disk, with or without its own node_modules, gets the very module instances the service runs.
 */
const FACILITY_URLS: ReadonlyMap<string, string> = new Map([
  ['spaceport', new URL('./index.ts', import.meta.url).href],
  ['spaceport/config', new URL('./config.ts', import.meta.url).href],
]);

let registered = false;

/** Installs the resolve hook once per process; call it before importing any route file. */
export function resolveFacilitiesFromAnywhere(): void {
  if (registered) return;
  registered = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = FACILITY_URLS.get(specifier);
      return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
    },
  });
}
