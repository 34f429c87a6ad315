export { NO_ROUTE, ServiceMetrics, type AnsweredRoute, type PoolCounts } from './service-metrics.ts';
export { bearerTokenMatches } from './bearer.ts';
