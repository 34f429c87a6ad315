import pg from 'pg';
import { NO_TENANT, TENANT_ROLE, TENANT_SETTING, type SessionTenant, type TenantDatabase } from '../../lib/db/tenant-database.ts';

/**
 * Statements that report the scope they ran under and the server connection that ran them:
 * through a transaction-mode pooler, run beside other tenants' work, they show whether each
 * statement had its own role and tenant, whichever server connection ran it, and whether
 * statements of different tenants did share server connections.
 */
const PROBE = {
  sql: `select pg_backend_pid() as backend, current_user as role, current_setting('${TENANT_SETTING}', true) as setting,
    array(select distinct tenant from documents union select distinct tenant from spaces order by 1) as tenants`,
  bindings: [],
};

interface Seen {
  backend: number;
  role: string;
  setting: string | null;
  tenants: string[];
}

/** What the probes found. */
export interface ProbeReport {
  statements: number;
  /** Each statement that ran under another scope than its own, or saw another tenant's rows. */
  problems: string[];
  /** The tenants each server connection (PostgreSQL backend) ran probes for. */
  backends: Map<number, Set<SessionTenant>>;
}

const nameOf = (tenant: SessionTenant): string => (tenant === NO_TENANT ? 'no tenant' : `"${tenant}"`);

/** The problems of one probe run for `tenant`. */
function problemsOf(tenant: SessionTenant, seen: Seen): string[] {
  const name = nameOf(tenant);
  const problems: string[] = [];
  if (seen.role !== TENANT_ROLE) problems.push(`a statement for ${name} ran as ${seen.role}`);
  if ((seen.setting ?? '') !== tenant) problems.push(`a statement for ${name} ran with the tenant setting "${seen.setting}"`);
  const strangers = seen.tenants.filter((other) => other !== tenant);
  if (strangers.length > 0) problems.push(`a statement for ${name} saw rows of ${strangers.join(', ')}`);
  return problems;
}

/**
 * Runs the probe on `database` from `loops` loops at once, each for `tenants` in turn, until the
 * returned function is called; it resolves with the report.
 */
export function probeScopes(database: TenantDatabase, tenants: readonly SessionTenant[], loops = 4): () => Promise<ProbeReport> {
  const report: ProbeReport = { statements: 0, problems: [], backends: new Map() };
  let stopping = false;
  const running = Array.from({ length: loops }, async (_, loop) => {
    for (let turn = loop; !stopping; turn++) {
      const tenant = tenants[turn % tenants.length] ?? NO_TENANT;
      report.statements++;
      try {
        const { rows } = await database.query<Seen>(tenant, PROBE);
        const seen = rows[0] as Seen;
        report.problems.push(...problemsOf(tenant, seen));
        report.backends.set(seen.backend, (report.backends.get(seen.backend) ?? new Set()).add(tenant));
      } catch (error) {
        report.problems.push(`a statement for ${nameOf(tenant)} failed: ${(error as Error).message}`);
      }
    }
  });
  return async () => {
    stopping = true;
    await Promise.all(running);
    return report;
  };
}

/** Adds `report` to `total`. */
export function addReport(total: ProbeReport, report: ProbeReport): void {
  total.statements += report.statements;
  total.problems.push(...report.problems);
  for (const [backend, tenants] of report.backends) total.backends.set(backend, new Set([...(total.backends.get(backend) ?? []), ...tenants]));
}

export function emptyReport(): ProbeReport {
  return { statements: 0, problems: [], backends: new Map() };
}

/** Server connections that ran statements of more than one tenant (no tenant counting as one). */
export function sharedBackends(report: ProbeReport): number {
  return [...report.backends.values()].filter((tenants) => tenants.size > 1).length;
}

/**
 * What a plain client of `url` (a pooler) finds on the server connections it is given, `samples`
 * statements from `clients` connections at once: any role, tenant or time limit that an earlier
 * statement left there, which a statement of the service would otherwise inherit.
 */
export async function leftoverScopes(url: string, clients = 8, samples = 200): Promise<string[]> {
  const user = decodeURIComponent(new URL(url).username);
  const pool = new pg.Pool({ connectionString: url, max: clients });
  const found = new Set<string>();
  try {
    await Promise.all(
      Array.from({ length: samples }, async () => {
        const { rows } = await pool.query<{ role: string; setting: string | null; timeout: string }>(
          `select current_user as role, current_setting('${TENANT_SETTING}', true) as setting, current_setting('statement_timeout') as timeout`,
        );
        const { role, setting, timeout } = rows[0] ?? { role: '?', setting: '?', timeout: '?' };
        if (role !== user || (setting ?? '') !== '' || timeout !== '0') found.add(`role ${role}, tenant setting "${setting}", statement_timeout ${timeout}`);
      }),
    );
  } finally {
    await pool.end();
  }
  return [...found];
}
