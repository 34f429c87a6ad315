/** Any other method (Node's parser accepts some forty) is `other`, so a scanner cycling through them adds one series, not forty. */
export const METHOD_LABELS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other'];

const NUMBERS: ReadonlyMap<string, number> = new Map(METHOD_LABELS.slice(0, -1).map((method, index) => [method, index]));
const OTHER = METHOD_LABELS.length - 1;

export function methodNumber(method: string): number {
  return NUMBERS.get(method) ?? OTHER;
}
