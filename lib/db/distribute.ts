import type { Knex } from 'knex';

const TENANT_ROLE = 'spaceport_tenant';
const ANCHOR = 'documents';

/** `make distribute` (SPEC §15.4): each step is skipped when already done; one line per step taken. */
export async function distributeTables(knex: Knex): Promise<string[]> {
  const done: string[] = [];
  if (!(await hasCitus(knex))) throw new Error('this database has no citus extension: create it on every node first (docs/scaling.md)');
  const tables = await tenantTables(knex);
  const kinds = await distributionKinds(knex);
  // A foreign key to a table Citus does not manage yet fails the distribution (and makes an identity column
  // unconvertible): the keys to `tenants` go first, and come back once both sides are distributed.
  const keys = await foreignKeysToTenants(knex, tables.filter((table) => kinds.get(table) !== 'h'));
  for (const key of keys) await knex.raw('alter table ?? drop constraint ??', [key.table, key.name]);
  if (kinds.get('tenants') !== 'n') {
    await knex.raw('select create_reference_table(?)', ['tenants']);
    await knex.raw('select truncate_local_data_after_distributing_table(?)', ['public.tenants']);
    done.push('tenants: a reference table');
  }
  for (const table of tables) {
    if (kinds.get(table) === 'h') continue;
    await knex.transaction(async (trx) => {
      // The array-paths trigger of `documents` writes a co-located table of the same tenant.
      await trx.raw('set local citus.enable_unsafe_triggers = on');
      await trx.raw("select create_distributed_table(?, 'tenant', colocate_with => ?)", [table, table === ANCHOR ? 'default' : ANCHOR]);
    });
    await knex.raw('select truncate_local_data_after_distributing_table(?)', [`public.${table}`]);
    done.push(`${table}: distributed by tenant${table === ANCHOR ? '' : `, co-located with ${ANCHOR}`}`);
  }
  for (const key of keys) await knex.raw(`alter table ?? add constraint ?? ${key.definition}`, [key.table, key.name]);
  done.push(...(await workerSettings(knex)));
  return done;
}

/** The restricted role logs in to the workers, the settings the service relies on, the functions its statements call. */
async function workerSettings(knex: Knex): Promise<string[]> {
  const database = (await knex.raw<{ rows: Array<{ name: string }> }>('select current_database() as name')).rows[0]?.name ?? '';
  await knex.raw(`alter role ${TENANT_ROLE} login`);
  await knex.raw("alter database ?? set citus.propagate_set_commands = 'local'", [database]);
  await knex.raw("alter database ?? set citus.enable_unsafe_triggers = 'on'", [database]);
  await knex.raw("select run_command_on_workers('alter function pg_catalog.jsonb_path_exists_opr(jsonb, jsonpath) leakproof')");
  const functions = await knex.raw<{ rows: Array<{ signature: string }> }>(
    `select p.oid::regprocedure::text as signature from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.prokind = 'f' and p.prorettype <> 'trigger'::regtype
        and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
        and not exists (select from pg_dist_object o where o.classid = 'pg_proc'::regclass and o.objid = p.oid)`,
  );
  for (const { signature } of functions.rows) await knex.raw('select create_distributed_function(?)', [signature]);
  return [
    `${TENANT_ROLE}: may log in (give it a password and let it in from the coordinator's and workers' addresses only)`,
    `${database}: citus.propagate_set_commands = 'local', citus.enable_unsafe_triggers = on`,
    'the workers: jsonb_path_exists_opr is LEAKPROOF',
    ...functions.rows.map(({ signature }) => `${signature}: on every node`),
  ];
}

async function hasCitus(knex: Knex): Promise<boolean> {
  const { rows } = await knex.raw<{ rows: unknown[] }>("select from pg_extension where extname = 'citus'");
  return rows.length > 0;
}

/** `documents` first: the others are co-located with it. */
export async function tenantTables(knex: Knex): Promise<string[]> {
  const { rows } = await knex.raw<{ rows: Array<{ name: string }> }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant' and not a.attisdropped
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition and c.relname <> 'tenants'
      order by c.relname <> ?, c.relname`,
    [ANCHOR],
  );
  return rows.map(({ name }) => name);
}

/** Each Citus table's kind: `h` distributed by hash, `n` reference (or Citus local). */
export async function distributionKinds(knex: Knex): Promise<Map<string, string>> {
  const { rows } = await knex.raw<{ rows: Array<{ name: string; kind: string }> }>("select logicalrelid::regclass::text as name, partmethod as kind from pg_dist_partition where repmodel = 's' or partmethod = 'h' or repmodel = 't'");
  return new Map(rows.map(({ name, kind }) => [name, kind]));
}

interface ForeignKey {
  table: string;
  name: string;
  definition: string;
}

async function foreignKeysToTenants(knex: Knex, tables: readonly string[]): Promise<ForeignKey[]> {
  if (tables.length === 0) return [];
  const { rows } = await knex.raw<{ rows: ForeignKey[] }>(
    `select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
      where contype = 'f' and confrelid = 'tenants'::regclass and conrelid::regclass::text = any(?)`,
    [[...tables]],
  );
  return rows;
}
