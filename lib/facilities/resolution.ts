import { registerHooks, type ModuleFormat } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The two specifiers route files import, mapped to this folder's files. A project anywhere on
 * disk, with or without its own node_modules, gets the very module instances the service runs.
 */
const FACILITY_URLS: ReadonlyMap<string, string> = new Map([
  ['spaceport', new URL('./index.ts', import.meta.url).href],
  ['spaceport/config', new URL('./config.ts', import.meta.url).href],
]);

/**
 * Project files are ES modules whatever a package.json above them says: `npm init -y` writes
 * `"type": "commonjs"`, under which every `import` failed (issue 37). Only the extensions whose
 * format a package.json decides are loaded so, each read once; `.cjs` and `.cts` stay CommonJS.
 */
const AS_ES_MODULE: ReadonlyMap<string, ModuleFormat> = new Map([
  ['.js', 'module'],
  ['.ts', 'module-typescript'],
]);

const projectsDirs = new Set<string>();
let registered = false;

/** Installs the module hooks once per process; call it before importing any route file of `projectsDir`. */
export function resolveFacilitiesFromAnywhere(projectsDir?: string): void {
  if (projectsDir !== undefined) projectsDirs.add(path.resolve(projectsDir));
  if (registered) return;
  registered = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = FACILITY_URLS.get(specifier);
      return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
    },
    load(url, context, nextLoad) {
      const format = projectFileFormat(url);
      return nextLoad(url, format === undefined ? context : { ...context, format });
    },
  });
}

/** The format of a `.js` or `.ts` file of a project (not of its node_modules); undefined for any other file. */
function projectFileFormat(url: string): ModuleFormat | undefined {
  if (!url.startsWith('file:')) return undefined;
  const file = fileURLToPath(url);
  const format = AS_ES_MODULE.get(path.extname(file));
  if (format === undefined || file.split(path.sep).includes('node_modules')) return undefined;
  for (const folder of projectsDirs) {
    if (file.startsWith(folder + path.sep)) return format;
  }
  return undefined;
}
