/** Freezes `value` and every object inside it; returns it. For trees without cycles (configuration, JSON). */
export function deepFreeze<Value>(value: Value): Value {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
