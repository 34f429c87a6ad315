import type { Knex } from 'knex';

/**
 * The update operators of the document store (`$set $unset $inc $push $addToSet $pull`), applied
 * by PostgreSQL inside the UPDATE statement itself: the new document is computed from the row's
 * current version, under the row's lock, so two concurrent `$inc`s never lose one (a
 * read-modify-write in the application would). `lib/documents/update.ts` checks an update and
 * turns it into the operations list these functions take as one bound value; paths are text
 * arrays inside it, never SQL text.
 *
 * A value of the wrong type (`$inc` on a string, `$push` to a non-array, a field inside a
 * non-object) raises SQLSTATE `SPD01` with a message naming the path: the statement fails,
 * nothing changes, and the store turns it into a `DocumentQueryError`.
 */
const FUNCTIONS = `
create function documents_value_at(target jsonb, path text[]) returns jsonb
language plpgsql stable as $$
declare
  key text;
begin
  foreach key in array path loop
    if jsonb_typeof(target) is distinct from 'object' then return null; end if;
    target := target -> key;
  end loop;
  return target;
end $$;

create function documents_set_at(target jsonb, path text[], value jsonb, name text) returns jsonb
language plpgsql stable as $$
declare
  child jsonb;
begin
  if cardinality(path) = 1 then return jsonb_set(target, path, value); end if;
  child := coalesce(target -> path[1], '{}');
  if jsonb_typeof(child) <> 'object' then
    raise exception 'cannot create field "%": "%" is not an object', name, path[1] using errcode = 'SPD01';
  end if;
  return jsonb_set(target, path[1:1], documents_set_at(child, path[2:], value, name));
end $$;

create function documents_apply_update(doc jsonb, operations jsonb) returns jsonb
language plpgsql stable as $$
declare
  operation jsonb;
  path text[];
  name text;
  current jsonb;
  operand jsonb;
  element jsonb;
  sum float8;
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
        sum := current::float8 + operand::float8;
        if abs(sum) = 'Infinity'::float8 then raise exception '$inc: "%" would overflow', name using errcode = 'SPD01'; end if;
        doc := documents_set_at(doc, path, to_jsonb(sum), name);
      end if;
    when 'push', 'addToSet' then
      if current is null then current := '[]';
      elsif jsonb_typeof(current) <> 'array' then
        raise exception '$%: "%" holds a %, not an array', operation ->> 'op', name, jsonb_typeof(current) using errcode = 'SPD01';
      end if;
      for element in select value from jsonb_array_elements(operand) loop
        if operation ->> 'op' = 'push' or not exists (select from jsonb_array_elements(current) as present where present.value = element) then
          current := current || jsonb_build_array(element);
        end if;
      end loop;
      doc := documents_set_at(doc, path, current, name);
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

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function documents_apply_update(jsonb, jsonb); drop function documents_set_at(jsonb, text[], jsonb, text); drop function documents_value_at(jsonb, text[])');
}
