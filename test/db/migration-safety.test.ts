import path from 'node:path';
import test from 'ava';
import { MIGRATIONS_DIR } from '../../lib/db/migration-files.ts';
import { recordMigrations, refusals } from '../helpers/migration-safety.ts';
import { migrationFolder } from '../helpers/migrations.ts';

/**
 * The safety check of SPEC §18.3: every migration's SQL, as it runs, read by squawk. An expand
 * migration may not break the release before (drop or rename a column or table, make a column
 * required, change a type), and no migration may hold a table while it builds an index or
 * validates a constraint, or wait for a lock without a bound; a rule is waived only with a reason.
 */

const UNSAFE = path.resolve(import.meta.dirname, '../fixtures/migrations/unsafe');

test("the repository's migrations pass the safety check, each rule they break waived with its reason", async (t) => {
  const refused = await refusals(await recordMigrations(MIGRATIONS_DIR));
  t.deepEqual(refused, [], refused.join('\n'));
});

test('the check refuses each unsafe expand migration, naming the file and the rule; a contract migration may drop', async (t) => {
  const refused = await refusals(await recordMigrations(migrationFolder(t, { link: UNSAFE })));
  t.log(refused.join('\n'));
  const rules = (file: string) =>
    refused
      .filter((line) => line.startsWith(`test/fixtures/migrations/unsafe/${file}: `))
      .map((line) => line.split(': ')[1])
      .sort();
  t.deepEqual(rules('29990101000001_gadgets.ts'), []);
  t.deepEqual(rules('29990101000002_drop_gadget_size.ts'), ['ban-drop-column']);
  t.deepEqual(rules('29990101000003_rename_gadget_name.ts'), ['renaming-column']);
  t.deepEqual(rules('29990101000004_gadget_colour_required.ts'), ['adding-required-field']);
  t.deepEqual(rules('29990101000005_gadget_owner_type.ts'), ['changing-column-type']);
  t.deepEqual(rules('29990101000006_gadget_owner_index.ts'), ['require-concurrent-index-creation']);
  t.deepEqual(rules('29990101000007_gadget_id_check.ts'), ['constraint-missing-not-valid']);
  t.deepEqual(rules('29990101000008_gadget_owner_tenant.ts'), ['adding-foreign-key-constraint', 'constraint-missing-not-valid']);
  t.deepEqual(rules('29990101000009_rename_gadgets.ts'), ['renaming-table']);
  t.deepEqual(rules('29990101000010_drop_widgets.ts'), ['ban-drop-table']);
  t.deepEqual(rules('29990101000011_spaces_by_update.ts'), [], 'waived with its reason');
  t.deepEqual(rules('29990101000012_spaces_by_creation.ts'), ['require-concurrent-index-creation', 'the waiver of require-concurrent-index-creation gives no reason (at least 20 characters)'].sort());
  t.deepEqual(rules('29990101000013_spaces_note_outside_transaction.ts'), ['prefer-robust-stmts', 'require-lock-timeout'], 'unbounded, and not safe to run again after a crash');
  t.deepEqual(rules('29990101000014_spaces_label.ts'), ['waives ban-drop-column, which it does not break']);
  t.deepEqual(rules('contract/29990101000015_drop_spaces_note.ts'), []);
  t.deepEqual(rules('29990101000016_gadget_views.ts'), []);
  t.deepEqual(rules('29990101000017_drop_gadget_view.ts'), ['ban-drop-object', 'ban-drop-object', 'renaming-object', 'renaming-object'], 'what squawk has no rule for');
  t.deepEqual(rules('29990101000018_gadget_parts_do_block.ts'), ['do-block'], 'what squawk cannot read');
  t.deepEqual(rules('contract/29990101000019_drop_gadget_colour.ts'), []);
  t.deepEqual(rules('29990101000020_spaces_label_dropped_beside_bookkeeping.ts'), ['ban-drop-column'], "a migration's statement is never taken for the runner's");
  t.deepEqual(rules('29990101000021_spaces_schemas_default_dropped.ts'), ['ban-drop-default'], 'a required field made in two steps');
  t.deepEqual(rules('29990101000022_revoke_spaces_delete.ts'), ['ban-revoke']);
  t.deepEqual(rules('29990101000023_spaces_memo_commented.ts'), [], 'a statement ending with a comment is read as it ran');
  t.true(refused.some((line) => line === 'test/fixtures/migrations/unsafe/29990101000002_drop_gadget_size.ts: ban-drop-column: Dropping a column may break existing clients. (alter table gadgets drop column size;)'));
  t.true(refused.includes('test/fixtures/migrations/unsafe/29990101000017_drop_gadget_view.ts: ban-drop-object: Dropping a view, function, type or other object may break existing clients. (drop view gadget_part_sizes; drop function gadget_double(int);)'));
});
