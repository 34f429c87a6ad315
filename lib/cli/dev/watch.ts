import path from 'node:path';
import { watch } from 'chokidar';

/** Changes closer together than this make one reload. */
const SETTLE_MS = 150;

export interface Watcher {
  close(): Promise<void>;
}

/** Calls `onChange` once changes settle: an editor's save (a write and a rename) or a `git checkout` is one call. */
export function watchFiles(paths: readonly string[], onChange: (changed: readonly string[]) => void): Watcher {
  const watcher = watch([...paths], {
    ignoreInitial: true,
    // A dot name (`.git`, an editor's `.routes.js.swp`) or dependencies: never what a reload is for.
    ignored: (file) => path.basename(file).startsWith('.') || file.split(path.sep).includes('node_modules'),
  });
  let changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  watcher.on('all', (_event, file) => {
    changed.add(file);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const settled = [...changed];
      changed = new Set();
      onChange(settled);
    }, SETTLE_MS);
  });
  return {
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}
