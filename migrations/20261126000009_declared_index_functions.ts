import type { Knex } from 'knex';
import type { Waivers } from '../lib/db/migration-tools.ts';

/**
 * Lets the indexes a project declares (`api/indexes.js`) serve filters under row-level security.
 * PostgreSQL uses an index for a policy-protected query only when every function of the condition
 * is leakproof; the key expressions of a declared index (lib/documents/index-keys.ts) read the
 * document with `jsonb_typeof`, `#>` and `#>>` and compare jsonb values, none of which raises an
 * error on any input, so none can reveal a row through one, but none is marked so. Only a
 * superuser may mark them: otherwise the service warns at start-up, when a project declares an
 * index, with the statement a superuser can run.
 */
const DECLARED_INDEX_FUNCTIONS = [
  'pg_catalog.jsonb_typeof(jsonb)',
  'pg_catalog.jsonb_extract_path(jsonb, text[])',
  'pg_catalog.jsonb_extract_path_text(jsonb, text[])',
  'pg_catalog.jsonb_eq(jsonb, jsonb)',
  'pg_catalog.jsonb_lt(jsonb, jsonb)',
  'pg_catalog.jsonb_le(jsonb, jsonb)',
  'pg_catalog.jsonb_gt(jsonb, jsonb)',
  'pg_catalog.jsonb_ge(jsonb, jsonb)',
];

/** What the safety check cannot read, and why it is safe. */
export const waivers: Waivers = {
  'do-block': 'its DO block only marks built-in functions leakproof when run by a superuser: no table, column or type is changed',
};

export async function up(knex: Knex): Promise<void> {
  await mark(knex, 'leakproof');
}

export async function down(knex: Knex): Promise<void> {
  await mark(knex, 'not leakproof');
}

async function mark(knex: Knex, marking: 'leakproof' | 'not leakproof'): Promise<void> {
  const statements = DECLARED_INDEX_FUNCTIONS.map((signature) => `alter function ${signature} ${marking};`).join('\n');
  await knex.raw(`
    do $$
    begin
      if (select rolsuper from pg_roles where rolname = current_user) then
        ${statements}
      end if;
    end
    $$`);
}
