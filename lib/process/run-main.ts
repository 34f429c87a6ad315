import { ConfigError } from '../config/index.ts';

/** Should `main` fail, one line on stderr and exit 1; `failed`: what did not happen, or the command's name. */
export function runMain(main: () => Promise<void>, failed: string, { firstLineOnly = false } = {}): void {
  main().catch((error: unknown) => {
    const text = (error as Error).message;
    const message = error instanceof ConfigError ? `configuration error: ${text}` : `${failed}: ${firstLineOnly ? text.split('\n')[0] : text}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  });
}
