import { AsyncLocalStorage } from 'node:async_hooks';
import type { Runtime } from '../runtime.ts';

/** What every data access made while serving one request can see (SPEC §4.2). */
export interface TenantContext {
  readonly tenant: string;
  readonly runtime: Runtime;
}

const storage = new AsyncLocalStorage<TenantContext>();

/** Runs `work` with `tenant` as the tenant of every data access it makes. */
export function runInTenant<Result>(context: TenantContext, work: () => Result): Result {
  return storage.run(context, work);
}

/** The tenant context of the current request, or undefined outside one. */
export function currentTenantContext(): TenantContext | undefined {
  return storage.getStore();
}
