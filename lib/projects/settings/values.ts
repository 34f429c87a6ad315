import type { ProjectSettingSources } from '../../config/index.ts';
import { environmentSchema } from '../../config/schema.ts';
import type { ProjectSettings, SettingDeclaration, SettingType, SettingValue } from '../../facilities/settings.ts';
import { displayPath, type RouteProblem } from '../problems.ts';
import { kindOf } from '../../values/kind-of.ts';
import { describeType, typeProblem } from './declarations.ts';

export interface ResolvedValues {
  readonly values: Readonly<Record<string, SettingValue>>;
  readonly problems: readonly RouteProblem[];
}

/** Where a project's settings come from and where they are declared, for the messages. */
export interface ProjectSettingsSource {
  readonly project: string;
  /** The settings file, or the `api` folder that has none. */
  readonly file: string;
  /** Undefined when the project declares no settings. */
  readonly settings: ProjectSettings | undefined;
}

/** SPEC §8.7: a secret from `<PROJECT>_<SETTING>`, else the project's expert section, else the default. */
export function resolveValues(source: ProjectSettingsSource, sources: ProjectSettingSources): ResolvedValues {
  const { project } = source;
  const section = Object.hasOwn(sources.sections, project) ? sources.sections[project] : {};
  if (section === null || typeof section !== 'object' || Array.isArray(section)) {
    return { values: {}, problems: [{ project, source: { configKey: project }, reason: `expert configuration: must be an object of ${project}'s settings (got ${kindOf(section)})` }] };
  }
  const declarations = source.settings?.declarations ?? {};
  const problems: RouteProblem[] = Object.keys(section)
    .filter((name) => !Object.hasOwn(declarations, name))
    .map((name) => ({ project, source: { configKey: `${project}.${name}` }, reason: `expert configuration: unknown setting (${declaredNames(source)})` }));
  const values: Record<string, SettingValue> = {};
  for (const [name, declaration] of Object.entries(declarations)) {
    const fromFile = Object.hasOwn(section, name) ? (section as Record<string, unknown>)[name] : undefined;
    const resolved = resolveOne(project, name, declaration, fromFile, sources.environment);
    problems.push(...resolved.problems);
    if (resolved.value !== undefined) values[name] = resolved.value;
  }
  return { values, problems };
}

interface ResolvedValue {
  readonly value: SettingValue | undefined;
  readonly problems: RouteProblem[];
}

function resolveOne(project: string, name: string, declaration: SettingDeclaration, fromFile: unknown, environment: ProjectSettingSources['environment']): ResolvedValue {
  const key = `${project}.${name}`;
  const variable = environmentName(project, name);
  const problems: RouteProblem[] = [];
  const fileProblem = fromFile === undefined ? undefined : typeProblem(declaration.type, fromFile);
  if (fileProblem !== undefined) problems.push({ project, source: { configKey: key }, reason: `expert configuration: ${fileProblem}` });
  const text = declaration.secret && Object.hasOwn(environment, variable) ? environment[variable] : undefined;
  const fromEnvironment = text === undefined ? undefined : parseEnvironmentValue(declaration.type, text);
  if (text !== undefined && fromEnvironment === undefined) {
    problems.push({ project, source: { environmentVariable: variable }, reason: `environment variable: must be ${describeType(declaration.type)}` });
  }
  const value = fromEnvironment ?? (fileProblem === undefined ? (fromFile as SettingValue | undefined) : undefined) ?? declaration.default;
  if (value === undefined && declaration.required && problems.length === 0) {
    const where = declaration.secret ? `the expert configuration (${key}) or the environment (${variable})` : `the expert configuration (${key})`;
    problems.push({ project, source: { configKey: key }, reason: `required and not set: set it in ${where}` });
  }
  return { value, problems };
}

function declaredNames(source: ProjectSettingsSource): string {
  const names = Object.keys(source.settings?.declarations ?? {});
  if (source.settings === undefined) return `${displayPath(source.file)} has no settings.js`;
  return `${displayPath(source.file)} declares ${names.length === 0 ? 'none' : names.join(', ')}`;
}

/** A section neither built in nor named after a project stops start-up whatever `projects.onError` says. */
export function unknownSections(sources: ProjectSettingSources, projects: ReadonlySet<string>, projectsDir: string): RouteProblem[] {
  return Object.keys(sources.sections)
    .filter((name) => !projects.has(name))
    .map((name) => ({ project: '', source: { configKey: name }, reason: `expert configuration: unknown key (neither a built-in section nor a project in ${projectsDir})` }));
}

/** A secret setting a project declares: what the environment may set. */
export interface DeclaredSecret {
  readonly project: string;
  /** The project's settings file. */
  readonly file: string;
  readonly setting: string;
}

/**
 * Variables the service reads itself (a test checks that `lib/` reads no other). A project secret
 * read from one would be the service's secret handed to a route file, or the service's setting
 * chosen by whoever sets a project's secret.
 */
const SERVICE_VARIABLES: ReadonlySet<string> = new Set([...Object.keys(environmentSchema.shape), 'XDG_RUNTIME_DIR', 'DEV_START_LIMIT_MS']);
/** Families of variables read by what the service runs on (libuv's `UV_` counted as Node.js's). */
const RUNTIME_PREFIXES: ReadonlyArray<readonly [prefix: string, reader: string]> = [
  ['NODE_', 'Node.js'],
  ['UV_', 'Node.js'],
  ['OTEL_', 'OpenTelemetry'],
];

export function secretsOf(project: string, file: string, settings: ProjectSettings | undefined): DeclaredSecret[] {
  return Object.entries(settings?.declarations ?? {})
    .filter(([, declaration]) => declaration.secret === true)
    .map(([setting]) => ({ project, file, setting }));
}

/**
 * A variable a secret is read from is that secret's alone (SPEC §8.7). Upper snake case loses
 * case and hyphens: `adv`'s `apiKey` and `adv-api`'s `key` would both be `ADV_API_KEY`; and a
 * variable the service or Node.js reads is never a project's. One problem per project involved.
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
      problems.push({ project, source: { file: own[0].file }, reason: `${describe(own[0], project)} would be read from ${variable}, ${why}` });
    }
  }
  return problems;
}

/** Who else reads `variable`, as the message says it; undefined when only the secret does. */
function otherReader(variable: string): string | undefined {
  if (SERVICE_VARIABLES.has(variable)) return 'the service itself reads';
  return runtimeReader(variable);
}

/**
 * Who reads every variable of `project`'s secrets (`NODE_RED_*` for `node-red`), as the message
 * says it; undefined when the project may declare secrets.
 */
export function secretsPrefixReader(project: string): string | undefined {
  return runtimeReader(`${environmentPrefix(project)}_`);
}

function runtimeReader(variable: string): string | undefined {
  const family = RUNTIME_PREFIXES.find(([prefix]) => variable.startsWith(prefix));
  return family === undefined ? undefined : `${family[1]} itself reads (${family[0]}*)`;
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

/** `<PROJECT>_<SETTING>` in upper snake case: `my-shop` and `pageSize` give `MY_SHOP_PAGE_SIZE`. */
export function environmentName(project: string, setting: string): string {
  return `${environmentPrefix(project)}_${setting.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

/** What every environment variable of a project's settings starts with: `MY_SHOP` for `my-shop`. */
export function environmentPrefix(project: string): string {
  return project.replaceAll('-', '_').toUpperCase();
}

/** An environment value is text: numbers and booleans are read from it, or undefined. */
export function parseEnvironmentValue(type: SettingType, text: string): SettingValue | undefined {
  switch (type) {
    case 'string':
      return text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined;
    case 'integer':
      return /^-?\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined;
    case 'number':
      return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : undefined;
  }
}
