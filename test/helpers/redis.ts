import test from 'ava';
import { Redis } from 'ioredis';

/** The Redis the shared-budget tests use: `REDIS_URL_TEST`, else the local one. */
export const REDIS_URL = process.env.REDIS_URL_TEST ?? 'redis://127.0.0.1:6379';

async function redisAnswers(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * `test` for tests that need a real Redis. Under CI, where Redis runs, they always run (and fail
 * if it is missing); elsewhere a machine without Redis skips them, since Redis is optional
 * (SPEC §8.6) and `make test` needs nothing installed by hand (SPEC §2.1).
 */
export async function testWithRedis(): Promise<typeof test.serial | typeof test.serial.skip> {
  if (process.env.CI || (await redisAnswers())) return test.serial;
  process.stderr.write(`no Redis at ${REDIS_URL}: the shared rate-limit tests are skipped\n`);
  return test.serial.skip;
}
