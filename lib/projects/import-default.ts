import { pathToFileURL } from 'node:url';
import { describeLoadError } from './load-error.ts';

export type Imported = { ok: true; exported: unknown } | { ok: false; reason: string };

/** The default export of a project's module, or why it does not load. */
export async function importDefault(file: string): Promise<Imported> {
  try {
    const namespace = (await import(pathToFileURL(file).href)) as { default?: unknown };
    return { ok: true, exported: namespace.default };
  } catch (error) {
    return { ok: false, reason: `does not load: ${describeLoadError(error, file)}` };
  }
}
