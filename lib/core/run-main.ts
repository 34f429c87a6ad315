import { ConfigError } from '../config/index.ts';

/**
 * Runs a long-lived process's `main` (`make run`, `make dev`): should it fail, one line on stderr
 * and exit 1. A configuration error says so; anything else follows `failed`, what did not happen.
 */
export function runMain(main: () => Promise<void>, failed: string): void {
  main().catch((error: unknown) => {
    const message = error instanceof ConfigError ? `configuration error: ${error.message}` : `${failed}: ${(error as Error).message}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  });
}
