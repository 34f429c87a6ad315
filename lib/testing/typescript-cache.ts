import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Node strips a TypeScript module's types again in every process, and its compile cache keeps V8's code, not the
 * stripped text: a test worker spent about a third of its start-up stripping the service's modules (with the text
 * kept here, V8's cache serves them too). One file per module, named by its path; it ends with a stamp of the source
 * and of Node's version, so an edit or another Node strips again. Positions are kept, so stack traces stay right.
 */
export function keepStrippedTypeScript(folder: string): void {
  mkdirSync(folder, { recursive: true });
  registerHooks({
    load(url, context, nextLoad) {
      if (context.format !== 'module-typescript' || !url.startsWith('file:')) return nextLoad(url, context);
      return { format: 'module', source: strippedModule(folder, fileURLToPath(url)), shortCircuit: true };
    },
  });
}

function strippedModule(folder: string, file: string): string {
  const source = readFileSync(file, 'utf8');
  const stamp = `\n//# stripped ${createHash('sha1').update(process.version).update(source).digest('hex')}`;
  const kept = path.join(folder, `${createHash('sha1').update(file).digest('hex')}.js`);
  const earlier = readIfThere(kept);
  if (earlier?.endsWith(stamp)) return earlier;
  const stripped = stripTypeScriptTypes(source) + stamp;
  // Renamed into place: the workers running beside this one read a whole file or none.
  const partial = `${kept}.${process.pid}`;
  writeFileSync(partial, stripped);
  renameSync(partial, kept);
  return stripped;
}

function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
