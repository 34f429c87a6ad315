/**
 * What an area's routes share beyond their declarations, as `make routes` and `/openapi.json`
 * describe them and the chain builder composes them.
 */
export interface AreaTraits {
  /** The service's own routes, or one project's. */
  readonly kind: 'system' | 'project';
  /** Runs behind the tenant step (the `tenant` header; 400 for an invalid or unknown tenant). */
  readonly tenant: boolean;
  /** Referer validation runs first (403). */
  readonly referer: boolean;
  /** Every route reads a body (projects); otherwise only a route declaring a body schema does. */
  readonly everyRouteReadsBody: boolean;
  /** What the way handlers are run answers on its own (the bridge: 500, 503, 504). */
  readonly handlerErrors: readonly number[];
  /** The area answers 404 while a feature switch is off (spaces). */
  readonly switchable: boolean;
}
