import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import { documentStore, type UpdateSpec } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';
import { collectionDocuments, update } from '../helpers/filters.ts';
import { applyModelUpdate } from '../helpers/update-model.ts';

// What PostgreSQL computes for an update equals what the guide says, written plainly in
// JavaScript (test/helpers/update-model.ts): the new documents, which updates are refused,
// and modifiedCount.

const RUNS = 150;

let database: MigratedDatabase;
test.before(async () => {
  database = await migratedDatabase(['acme']);
});
test.after.always(async () => {
  await database?.close();
});

test(`updateMany gives the documents the model gives, and refuses the same updates (${RUNS} cases)`, async (t) => {
  const notes = documentStore(database.tenantDatabase, 'acme').collection('notes');
  await fc.assert(
    fc.asyncProperty(collectionDocuments, update, async (generatedDocuments, generatedSpec) => {
      // Plain objects, as the store answers (the generator makes some without a prototype).
      const documents = JSON.parse(JSON.stringify(generatedDocuments)) as Array<Record<string, unknown>>;
      const spec = JSON.parse(JSON.stringify(generatedSpec)) as Record<string, Record<string, unknown>>;
      await notes.deleteMany({});
      if (documents.length > 0) await notes.insertMany(documents);
      let expected: Array<Record<string, unknown>> | 'refused';
      try {
        expected = documents.map((document) => applyModelUpdate(document, spec));
      } catch {
        expected = 'refused';
      }
      const outcome = await notes.updateMany({}, spec as UpdateSpec).then(
        (result) => result,
        () => 'refused' as const,
      );
      const stored = await notes.find().sort({ _id: 1 }).toArray();
      if (expected === 'refused' || outcome === 'refused') {
        // Conflicting paths are refused by the store before the model would see them.
        if (outcome !== 'refused') throw new Error(`the model refuses ${JSON.stringify(spec)} on ${JSON.stringify(documents)}; the store took it`);
        if (!isDeepStrictEqual(stored, [...documents].sort(byId))) throw new Error('a refused update changed documents');
        return;
      }
      const sorted = [...expected].sort(byId);
      if (!isDeepStrictEqual(stored, sorted)) throw new Error(`stored ${JSON.stringify(stored)}, the model says ${JSON.stringify(sorted)}`);
      const changed = documents.filter((document, index) => !isDeepStrictEqual(document, (expected as Array<Record<string, unknown>>)[index])).length;
      if (outcome.modifiedCount !== changed || outcome.matchedCount !== documents.length) throw new Error(`counts ${JSON.stringify(outcome)}, the model changed ${changed}`);
    }),
    { numRuns: RUNS, includeErrorInReport: true },
  );
  t.pass();
});

function byId(left: Record<string, unknown>, right: Record<string, unknown>): number {
  return String(left._id) < String(right._id) ? -1 : 1;
}
