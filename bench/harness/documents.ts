import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createKnex } from '../../lib/db/connect.ts';
import { buildDeclaredIndexes } from '../../lib/documents/index-build.ts';
import { validateIndexes } from '../../lib/projects/index-file.ts';

const INDEX_FILE = path.resolve(import.meta.dirname, '../fixtures/benchmark/api/indexes.js');
/** How many range starts item 7 cycles through, spread over the whole range. */
const LOOKUPS = 10;

/**
 * Seeds `count` documents into the `events` collection of the `default` tenant in one SQL
 * statement, each with a `score` from 0 to count - 1 (each once, in an order unrelated to
 * insertion), then builds the benchmark fixture's declared index as the service would, before any
 * service starts: a build under way would weigh on the other measurements. Returns the range
 * starts to request. With `count` 0 only the (empty) index is built.
 */
export async function seedEvents(databaseUrl: string, count: number): Promise<number[]> {
  const knex = createKnex(databaseUrl);
  try {
    if (count > 0) {
      // 7919 is prime, so n * 7919 mod count visits every score once when count is not a multiple of it.
      await knex.raw(
        `insert into documents (tenant, collection, id, doc)
         select 'default', 'events', 'e' || n, jsonb_build_object('_id', 'e' || n, 'score', (n::bigint * 7919) % ?, 'kind', 'k' || (n % 20), 'title', 'Event ' || n)
         from generate_series(0, ? - 1) as n`,
        [count, count],
      );
    }
    const declared = validateIndexes('benchmark', INDEX_FILE, ((await import(pathToFileURL(INDEX_FILE).href)) as { default: unknown }).default);
    if (declared.problems.length > 0) throw new Error(`benchmark indexes: ${declared.problems.map((problem) => problem.reason).join('; ')}`);
    await buildDeclaredIndexes(databaseUrl, declared.indexes, { info: () => {}, warn: () => {}, error: () => {} }).done;
    await knex.raw('analyze documents');
  } finally {
    await knex.destroy();
  }
  return Array.from({ length: LOOKUPS }, (_, index) => Math.floor((index * count) / LOOKUPS) + 17);
}
