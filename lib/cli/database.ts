import { createRuntime, releaseRuntime } from '../server.ts';
import type { Runtime } from '../core/runtime.ts';

/** Runs `work` with the database `make run` uses: DATABASE_URL, else the embedded one. */
export async function withRuntime<Result>(work: (runtime: Runtime) => Promise<Result>): Promise<Result> {
  const runtime = await createRuntime({ env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' } });
  try {
    return await work(runtime);
  } finally {
    await releaseRuntime(runtime);
  }
}
