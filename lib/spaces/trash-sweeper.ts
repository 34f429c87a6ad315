import { NO_TENANT, type TenantDatabase } from '../db/tenant-database.ts';
import type { Logger } from '../logger/index.ts';
import { purgeExpiredSpaces } from './trash.ts';

/** The purge of spaces past their days (SPEC §6.7), run by each instance on a timer. */
export interface TrashSweeper {
  /** Runs one sweep now (the timer's work); answers how many spaces it purged. */
  sweep(): Promise<number>;
  /** Stops the timer and waits for a sweep under way, which stops after its current transaction. */
  stop(): Promise<void>;
}

export interface TrashSweeperOptions {
  readonly database: TenantDatabase;
  readonly trashDays: number;
  readonly intervalMs: number;
  readonly logger: Logger;
}

/**
 * Sweeps tenant by tenant, in transactions scoped like a request's: row-level security applies,
 * and no session state is needed (a transaction-mode pooler works). A SECURITY DEFINER function
 * could purge every tenant at once, but only as a role passing the policies, a hole in the
 * second wall. Instances sweeping at once never purge a space twice: no lock among them.
 */
export function startTrashSweeper(options: TrashSweeperOptions): TrashSweeper {
  let stopped = false;
  let running: Promise<number> | undefined;
  const sweep = (): Promise<number> => {
    running ??= sweepTenants(options, () => !stopped).finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    sweep().catch((error: unknown) => options.logger.warn({ error: (error as Error).message }, 'the purge of trashed spaces failed; it is tried again at the next sweep'));
  }, options.intervalMs);
  timer.unref();
  return {
    sweep,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}

/** `stillWanted` is asked between transactions: a stop lets the one under way commit. */
async function sweepTenants(options: TrashSweeperOptions, stillWanted: () => boolean): Promise<number> {
  const { rows } = await options.database.query<{ name: string }>(NO_TENANT, { sql: 'select name from tenants order by name', bindings: [] });
  let purged = 0;
  for (const { name } of rows) {
    if (!stillWanted()) break;
    purged += await purgeExpiredSpaces({ database: options.database, tenant: name, stillWanted: () => true }, options.trashDays, stillWanted);
  }
  if (purged > 0) options.logger.info({ purged }, 'trashed spaces purged');
  return purged;
}
