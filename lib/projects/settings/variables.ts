import { environmentSchema } from '../../config/schema.ts';
import type { ProjectSettings } from '../../facilities/settings.ts';
import type { RouteProblem } from '../problems.ts';
import { environmentName } from './environment.ts';

/** A secret setting a project declares: what the environment may set. */
export interface DeclaredSecret {
  readonly project: string;
  /** The project's settings file. */
  readonly file: string;
  readonly setting: string;
}

/**
 * Variables the service reads itself: its configuration (`DATABASE_URL`, `JWT_SECRET`,
 * `REDIS_URL`...), where the embedded database's keeper puts its socket, and `make dev`'s start
 * limit (a test's setting). A project secret
 * read from one would be the service's secret handed to a route file, or the service's setting
 * chosen by whoever sets a project's secret. (A test checks that `lib/` reads no other.)
 */
const SERVICE_VARIABLES: ReadonlySet<string> = new Set([...Object.keys(environmentSchema.shape), 'XDG_RUNTIME_DIR', 'DEV_START_LIMIT_MS']);
/** Families of variables the runtime reads: Node.js (`NODE_OPTIONS`, `NODE_EXTRA_CA_CERTS`...) and libuv (`UV_THREADPOOL_SIZE`). */
const RUNTIME_PREFIXES = ['NODE_', 'UV_'];

export function secretsOf(project: string, file: string, settings: ProjectSettings | undefined): DeclaredSecret[] {
  return Object.entries(settings?.declarations ?? {})
    .filter(([, declaration]) => declaration.secret === true)
    .map(([setting]) => ({ project, file, setting }));
}

/**
 * Every environment variable a secret is read from belongs to that one secret (SPEC §8.7).
 * Upper snake case loses case and hyphens: `adv`'s `apiKey` and `adv-api`'s `key` would both be
 * read from `ADV_API_KEY`, `aBC` and `aBc` of one project from `<PROJECT>_A_BC`; and a variable
 * the service or Node.js reads is never a project's. One problem for each project involved, in
 * its settings file, naming every secret involved; no value is ever shown.
 */
export function sharedVariableProblems(secrets: readonly DeclaredSecret[]): RouteProblem[] {
  const byVariable = grouped(secrets, ({ project, setting }) => environmentName(project, setting));
  const problems: RouteProblem[] = [];
  for (const [variable, sharing] of byVariable) {
    const reader = otherReader(variable);
    if (reader === undefined && sharing.length < 2) continue;
    for (const [project, own] of grouped(sharing, (secret) => secret.project)) {
      const others = sharing.filter((secret) => secret !== own[0]).map((secret) => describe(secret, project));
      const why = reader === undefined ? `as would ${others.join(' and ')}; rename one` : `which ${reader}; rename it`;
      problems.push({ project, file: own[0].file, reason: `${describe(own[0], project)} would be read from ${variable}, ${why}` });
    }
  }
  return problems;
}

/** Who else reads `variable`, as the message says it; undefined when only the secret does. */
function otherReader(variable: string): string | undefined {
  if (SERVICE_VARIABLES.has(variable)) return 'the service itself reads';
  const prefix = RUNTIME_PREFIXES.find((each) => variable.startsWith(each));
  return prefix === undefined ? undefined : `Node.js itself reads (${prefix}*)`;
}

function describe(secret: DeclaredSecret, project: string): string {
  return secret.project === project ? `secret "${secret.setting}"` : `secret "${secret.setting}" of project "${secret.project}"`;
}

/** `Map.groupBy` (ES2024, beyond the compiler's library here). */
function grouped<Item>(items: readonly Item[], keyOf: (item: Item) => string): Map<string, Item[]> {
  const groups = new Map<string, Item[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}
