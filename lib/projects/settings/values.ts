import type { ProjectSettingSources } from '../../config/index.ts';
import type { ProjectSettings, SettingDeclaration, SettingValue } from '../../facilities/settings.ts';
import { displayPath, kindOf, type RouteProblem } from '../problems.ts';
import { describeType, typeProblem } from './declarations.ts';
import { environmentName, parseEnvironmentValue } from './environment.ts';

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

/**
 * A project's values (SPEC §8.7): a secret from `<PROJECT>_<SETTING>` in the environment, else
 * from the expert configuration's section named after the project, else the default. Every
 * problem is reported: a key nobody declared, a wrong type, a required setting left unset.
 */
export function resolveValues(source: ProjectSettingsSource, sources: ProjectSettingSources): ResolvedValues {
  const { project } = source;
  const section = Object.hasOwn(sources.sections, project) ? sources.sections[project] : {};
  if (section === null || typeof section !== 'object' || Array.isArray(section)) {
    return { values: {}, problems: [{ project, file: project, reason: `expert configuration: must be an object of ${project}'s settings (got ${kindOf(section)})` }] };
  }
  const declarations = source.settings?.declarations ?? {};
  const problems: RouteProblem[] = Object.keys(section)
    .filter((name) => !Object.hasOwn(declarations, name))
    .map((name) => ({ project, file: `${project}.${name}`, reason: `expert configuration: unknown setting (${declaredNames(source)})` }));
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
  if (fileProblem !== undefined) problems.push({ project, file: key, reason: `expert configuration: ${fileProblem}` });
  const text = declaration.secret && Object.hasOwn(environment, variable) ? environment[variable] : undefined;
  const fromEnvironment = text === undefined ? undefined : parseEnvironmentValue(declaration.type, text);
  if (text !== undefined && fromEnvironment === undefined) {
    problems.push({ project, file: variable, reason: `environment variable: must be ${describeType(declaration.type)}` });
  }
  const value = fromEnvironment ?? (fileProblem === undefined ? (fromFile as SettingValue | undefined) : undefined) ?? declaration.default;
  if (value === undefined && declaration.required && problems.length === 0) {
    const where = declaration.secret ? `the expert configuration (${key}) or the environment (${variable})` : `the expert configuration (${key})`;
    problems.push({ project, file: key, reason: `required and not set: set it in ${where}` });
  }
  return { value, problems };
}

function declaredNames(source: ProjectSettingsSource): string {
  const names = Object.keys(source.settings?.declarations ?? {});
  if (source.settings === undefined) return `${displayPath(source.file)} has no settings.js`;
  return `${displayPath(source.file)} declares ${names.length === 0 ? 'none' : names.join(', ')}`;
}
