import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

/**
 * Preloaded with `--import` into a service process: appends the URL of every module the
 * process resolves (imported or required) to the file `SPACEPORT_MODULE_LOG` names.
 */
const file = process.env.SPACEPORT_MODULE_LOG;
if (file) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      appendFileSync(file, `${resolved.url}\n`);
      return resolved;
    },
  });
}
