/**
 * The name `make routes` and `make dev` show for one of a route's steps: its function's own, or
 * for an express-validator chain, whose function is always named `middleware`, what it checks:
 * `body(amount)`, `param(id)`, `check(token)` for one over every part of the request.
 */
export function stepName(step: unknown): string {
  if (typeof step !== 'function') return 'anonymous';
  return validationChainName(step) ?? (step.name === '' ? 'anonymous' : step.name);
}

/** express-validator's function for each part of the request it reads. */
const VALIDATOR_OF_LOCATION: Readonly<Record<string, string>> = { body: 'body', cookies: 'cookie', headers: 'header', params: 'param', query: 'query' };

/** express-validator's ValidationChain has a public `builder.build()` listing `fields` and `locations`; a test fails should it go. */
function validationChainName(step: object): string | undefined {
  const builder = (step as { builder?: { build?: unknown } }).builder;
  if (typeof builder?.build !== 'function') return undefined;
  const context = (builder.build as () => unknown).call(builder) as { fields?: unknown; locations?: unknown };
  if (!Array.isArray(context.fields) || !Array.isArray(context.locations)) return undefined;
  const [location] = context.locations;
  const validator = context.locations.length === 1 ? VALIDATOR_OF_LOCATION[String(location)] : undefined;
  return `${validator ?? 'check'}(${context.fields.join(', ')})`;
}
