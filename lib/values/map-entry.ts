/** The value `map` holds at `key`; when it holds none, `create`'s, stored there first. */
export function entryOf<Key, Value>(map: Map<Key, Value>, key: Key, create: () => Value): Value {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
