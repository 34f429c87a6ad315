import type { Knex } from 'knex';
import * as previous from './20261126000008_document_update_operators.ts';

/**
 * `$push` and `$addToSet` in linear time, and `$inc` past the largest number as the store's own
 * error (SPEC §17.3). The operators of `..._document_update_operators` appended one element at a
 * time, copying the array each time, and `$addToSet` looked for each new value in the whole
 * array: 5 000 items did not finish within the statement limit. `$push` now appends its values
 * in one concatenation; `$addToSet` ranks the array's values and the new ones together, sorted
 * by value, and keeps a new one only where it comes first (n log n). (`$pull`'s `not exists` is
 * planned as a hashed anti-join already: 5 000 values out of 10 000 take well under a second.) `$inc` overflowed inside
 * PostgreSQL's float8 addition (`value out of range`) before its own check could run: the halves
 * are added first, which cannot overflow and rounds as the whole sum would, so a sum that would
 * round to infinity is refused with SQLSTATE `SPD01` naming the path, before it is made.
 *
 * Expand: the functions take and give what they did, so the release before runs on them too.
 */
const FUNCTIONS = `
create function documents_appended(current jsonb, operand jsonb, unique_values boolean) returns jsonb
language sql immutable as $$
  select current || case when not unique_values then operand else coalesce((
    select jsonb_agg(ranked.value order by ranked.position)
    from (
      select every.value, every.source, every.position,
        row_number() over (partition by every.value order by every.source, every.position) as nth
      from (
        select held.value, 0 as source, held.position from jsonb_array_elements(current) with ordinality as held(value, position)
        union all
        select added.value, 1, added.position from jsonb_array_elements(operand) with ordinality as added(value, position)
      ) as every
    ) as ranked
    where ranked.nth = 1 and ranked.source = 1
  ), '[]') end
$$;

create function documents_incremented(current jsonb, operand jsonb, name text) returns jsonb
language plpgsql immutable as $$
begin
  -- Halving is exact for numbers this large, so the halves' sum reaches 2^1023 exactly when the
  -- whole sum would round to infinity.
  if abs(current::float8 / 2 + operand::float8 / 2) >= 2::float8 ^ 1023 then
    raise exception '$inc: "%" would overflow', name using errcode = 'SPD01';
  end if;
  return to_jsonb(current::float8 + operand::float8);
end $$;

create or replace function documents_apply_update(doc jsonb, operations jsonb) returns jsonb
language plpgsql stable as $$
declare
  operation jsonb;
  path text[];
  name text;
  current jsonb;
  operand jsonb;
begin
  for operation in select value from jsonb_array_elements(operations) loop
    path := array(select jsonb_array_elements_text(operation -> 'path'));
    name := array_to_string(path, '.');
    current := documents_value_at(doc, path);
    operand := operation -> 'value';
    case operation ->> 'op'
    when 'keepId' then
      if doc -> '_id' is distinct from operand then raise exception '_id cannot be changed' using errcode = 'SPD01'; end if;
    when 'set' then
      doc := documents_set_at(doc, path, operand, name);
    when 'unset' then
      if current is not null then doc := doc #- path; end if;
    when 'inc' then
      if current is null then
        doc := documents_set_at(doc, path, operand, name);
      elsif jsonb_typeof(current) <> 'number' then
        raise exception '$inc: "%" holds a %, not a number', name, jsonb_typeof(current) using errcode = 'SPD01';
      else
        doc := documents_set_at(doc, path, documents_incremented(current, operand, name), name);
      end if;
    when 'push', 'addToSet' then
      if current is null then current := '[]';
      elsif jsonb_typeof(current) <> 'array' then
        raise exception '$%: "%" holds a %, not an array', operation ->> 'op', name, jsonb_typeof(current) using errcode = 'SPD01';
      end if;
      doc := documents_set_at(doc, path, documents_appended(current, operand, operation ->> 'op' = 'addToSet'), name);
    when 'pull' then
      if current is null then continue; end if;
      if jsonb_typeof(current) <> 'array' then
        raise exception '$pull: "%" holds a %, not an array', name, jsonb_typeof(current) using errcode = 'SPD01';
      end if;
      doc := documents_set_at(doc, path, coalesce((
        select jsonb_agg(kept.value order by kept.position) from jsonb_array_elements(current) with ordinality as kept(value, position)
        where not exists (select from jsonb_array_elements(operand) as pulled where pulled.value = kept.value)
      ), '[]'), name);
    else
      raise exception 'unknown update operation "%"', operation ->> 'op' using errcode = 'SPD01';
    end case;
  end loop;
  return doc;
end $$;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(FUNCTIONS);
}

/** The operators as they were: the earlier migration's functions, made again. */
export async function down(knex: Knex): Promise<void> {
  await previous.down(knex);
  await previous.up(knex);
  await knex.raw('drop function documents_incremented(jsonb, jsonb, text); drop function documents_appended(jsonb, jsonb, boolean)');
}
