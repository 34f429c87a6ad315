import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METHOD_LABELS, methodNumber } from './labels.ts';
import { RequestDurations } from './request-durations.ts';

export interface PoolCounts {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
  readonly tenantsAtShare: number;
  readonly shareWaiting: number;
}

export interface AnsweredRoute {
  readonly project: string | undefined;
  /** `GET /heartbeat`, `GET /healthz`. */
  readonly name: string;
}

/** The route label of a request no declared route answered: whatever its URL, one series. */
export const NO_ROUTE = 'none';

/** Seconds: from a tenth of a millisecond (a cached heartbeat) to ten seconds (a handler's time limit and beyond). */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Seconds a statement waited for its tenant's share: up to `limits.queueMs` (at most a minute). */
const SHARE_WAIT_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * A registry of its own, so two services in one process keep theirs apart. Every label comes from what the service
 * declared or decided, never from the request as sent, so the series stay bounded whatever clients send.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #requests = new RequestDurations(
    'spaceport_http_request_duration_seconds',
    'Time from a request reaching the service to its answer being decided, by method, declared route and status.',
    REQUEST_BUCKETS,
    METHOD_LABELS,
  );
  readonly #statements: Histogram;
  readonly #rejections: Counter<'limit'>;
  readonly #shareWaits: Histogram<'class' | 'outcome'>;
  #poolCounts: () => PoolCounts = () => ({ total: 0, idle: 0, waiting: 0, tenantsAtShare: 0, shareWaiting: 0 });
  #unbuiltIndexes: () => number = () => 0;

  constructor() {
    const registers = [this.registry];
    this.registry.registerMetric(this.#requests.asMetric());
    this.#statements = new Histogram({
      name: 'spaceport_db_statement_duration_seconds',
      help: 'Time each statement on tenant data took, from being sent to its answer (begin and commit included).',
      buckets: STATEMENT_BUCKETS,
      registers,
    });
    this.#rejections = new Counter({
      name: 'spaceport_rate_limit_rejections_total',
      help: 'Requests answered 429 by a rate limit, by the limit\'s name.',
      labelNames: ['limit'],
      registers,
    });
    this.#poolGauge('spaceport_db_pool_connections', 'Connections the tenant pool holds, idle or in use.', (counts) => counts.total);
    this.#poolGauge('spaceport_db_pool_idle_connections', 'Connections of the tenant pool waiting for a statement.', (counts) => counts.idle);
    this.#poolGauge('spaceport_db_pool_waiting_clients', 'Statements waiting for a connection of the tenant pool.', (counts) => counts.waiting);
    // By class (a tenant's statements, the service's own), never by tenant: the series stay bounded (SPEC §16.1).
    this.#shareWaits = new Histogram({
      name: 'spaceport_db_share_wait_seconds',
      help: "Time statements over their tenant's share of the pool waited for one of its connections, by class (tenant, service) and outcome (granted, refused: answered 503).",
      labelNames: ['class', 'outcome'],
      buckets: SHARE_WAIT_BUCKETS,
      registers,
    });
    this.#poolGauge('spaceport_db_tenants_at_share', "Tenants using their whole share of the pool's connections (limits.tenantConnections).", (counts) => counts.tenantsAtShare);
    this.#poolGauge('spaceport_db_share_waiting_statements', "Statements waiting in their tenant's queue for a connection of its share.", (counts) => counts.shareWaiting);
    const unbuilt = () => this.#unbuiltIndexes();
    new Gauge({
      name: 'spaceport_declared_indexes_unbuilt',
      help: 'Declared unique indexes the start-up build could not make (documents already break them): writes to their collections are refused.',
      registers,
      collect() {
        this.set(unbuilt());
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  watchUnbuiltIndexes(count: () => number): void {
    this.#unbuiltIndexes = count;
  }

  watchPool(counts: () => PoolCounts): void {
    this.#poolCounts = counts;
  }

  /** `route` undefined: no declared route answered. */
  requestAnswered(method: string, route: AnsweredRoute | undefined, status: number, seconds: number): void {
    this.#requests.observe(route?.project ?? '', route?.name ?? NO_ROUTE, methodNumber(method), status, seconds);
  }

  /** Bound, so the database layer can be handed it as a plain callback. */
  readonly statementRan = (seconds: number): void => {
    this.#statements.observe(seconds);
  };

  /** Bound, like `statementRan`: a statement over its tenant's share waited this long, then got a connection or a 503. */
  readonly shareWaited = (shareClass: 'tenant' | 'service', outcome: 'granted' | 'refused', seconds: number): void => {
    this.#shareWaits.observe({ class: shareClass, outcome }, seconds);
  };

  rateLimitRejected(limit: string): void {
    this.#rejections.inc({ limit });
  }

  async exposition(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  #poolGauge(name: string, help: string, read: (counts: PoolCounts) => number): void {
    const counts = () => this.#poolCounts();
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read(counts()));
      },
    });
  }
}
