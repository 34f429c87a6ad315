import type { Config } from '../config/index.ts';
import { currentConfig } from './current.ts';

/** The kinds of value a setting holds. */
export type SettingType = 'string' | 'number' | 'integer' | 'boolean';

/** A setting's value, as its type declares it. */
export type SettingValue = string | number | boolean;

/** One entry of `defineSettings({...})` (SPEC §8.7). */
export interface SettingDeclaration {
  readonly type: SettingType;
  /** Used when neither the expert configuration nor (for a secret) the environment sets it. */
  readonly default?: SettingValue;
  /**
   * Read from the environment too (`<PROJECT>_<SETTING>`, winning over the expert file), and
   * never shown in a log, an answer, the `config` view or `make routes`. A secret has no default.
   */
  readonly secret?: boolean;
  /** Start-up stops when it has no value. */
  readonly required?: boolean;
  readonly description?: string;
}

export type SettingDeclarations = Readonly<Record<string, SettingDeclaration>>;

type ValueOfType<Type extends SettingType> = Type extends 'string' ? string : Type extends 'boolean' ? boolean : number;

/** A setting with a default or marked required always has a value; any other may be unset. */
type ValueOf<Declaration extends SettingDeclaration> = Declaration extends { readonly default: SettingValue } | { readonly required: true }
  ? ValueOfType<Declaration['type']>
  : ValueOfType<Declaration['type']> | undefined;

/** The values of a project's settings, typed after its declarations. */
export type SettingValues<Declarations extends SettingDeclarations> = {
  readonly [Name in keyof Declarations]: ValueOf<Declarations[Name]>;
};

/** What `defineSettings()` returns: a project's declarations, and the way to read their values. */
export interface ProjectSettings<Declarations extends SettingDeclarations = SettingDeclarations> {
  readonly declarations: Declarations;
  /** The value of one setting for the service that is running (the request's, inside one). */
  get<Name extends keyof Declarations & string>(name: Name): SettingValues<Declarations>[Name];
}

/** What `defineSettings()` has made: the loader accepts nothing else as `api/settings.js`. */
const defined = new WeakSet<ProjectSettings>();

type Values = Readonly<Record<string, SettingValue | undefined>>;

/** Per configuration (one per running service), each loaded project's values. */
const boundValues = new WeakMap<Config, { bySettings: Map<ProjectSettings, Values>; byProject: Map<string, Values> }>();

/**
 * Declares a project's settings, in `api/settings.js` (default export):
 *
 * ```js
 * export default defineSettings({
 *   apiKey: { type: 'string', secret: true, required: true },
 *   pageSize: { type: 'integer', default: 20 },
 * });
 * ```
 *
 * Handlers import that module and read `settings.get('apiKey')`: values come from the expert
 * configuration under the project's name and, for secrets, from `<PROJECT>_API_KEY`.
 */
export function defineSettings<const Declarations extends SettingDeclarations>(declarations: Declarations): ProjectSettings<Declarations> {
  const settings: ProjectSettings<Declarations> = Object.freeze({
    declarations,
    get: <Name extends keyof Declarations & string>(name: Name) => valuesOf(settings, currentConfig())[name] as SettingValues<Declarations>[Name],
  });
  defined.add(settings);
  return settings;
}

export function isDefinedSettings(candidate: unknown): candidate is ProjectSettings {
  return typeof candidate === 'object' && candidate !== null && defined.has(candidate as ProjectSettings);
}

/** Called by the loader once a project's values are resolved, before its route file is imported. */
export function bindSettings(config: Config, project: string, settings: ProjectSettings, values: Values): void {
  const bound = boundValues.get(config) ?? { bySettings: new Map(), byProject: new Map() };
  const frozen = Object.freeze({ ...values });
  bound.bySettings.set(settings, frozen);
  bound.byProject.set(project, frozen);
  boundValues.set(config, bound);
}

/** A project's values in the service configured by `config`; none when it declares no settings. */
export function valuesOfProject(config: Config, project: string): Values {
  return boundValues.get(config)?.byProject.get(project) ?? {};
}

/** The values `settings` has in the service configured by `config`. */
export function valuesOf(settings: ProjectSettings, config: Config): Values {
  const values = boundValues.get(config)?.bySettings.get(settings);
  if (values === undefined) {
    throw new Error("spaceport: these settings belong to no loaded project (a project's settings are the default export of its api/settings.js)");
  }
  return values;
}
