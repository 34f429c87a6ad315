import { ConfigError } from '../config/index.ts';

/**
 * Runs a process's `main` (`make run`, `make dev`, a make target's command): should it fail, a
 * line on stderr and exit 1. A configuration error says so; anything else follows `failed`
 * (what did not happen, or the command's name), whole or, for a command, its first line.
 */
export function runMain(main: () => Promise<void>, failed: string, { firstLineOnly = false } = {}): void {
  main().catch((error: unknown) => {
    const text = (error as Error).message;
    const message = error instanceof ConfigError ? `configuration error: ${text}` : `${failed}: ${firstLineOnly ? text.split('\n')[0] : text}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  });
}
