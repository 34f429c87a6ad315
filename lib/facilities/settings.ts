import { currentFacilityState } from './current.ts';

/** A project's setting values by name, as `defineSettings` declared them. */
export type SettingValuesByName = Readonly<Record<string, string | number | boolean | undefined>>;

/** Each loaded project's setting values, bound before its route file is imported; `settings` is what `defineSettings` returned. */
export interface ProjectSettingValues {
  bind(project: string, settings: object, values: SettingValuesByName): void;
  /** Undefined for settings no loaded project declares. */
  valuesOf(settings: object): SettingValuesByName | undefined;
  /** None when the project declares no settings. */
  valuesOfProject(project: string): SettingValuesByName;
}

declare module '../core/runtime.ts' {
  interface Runtime {
    readonly projectSettings: ProjectSettingValues;
  }
}

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
    get: <Name extends keyof Declarations & string>(name: Name) => boundValuesOf(settings)[name] as SettingValues<Declarations>[Name],
  });
  defined.add(settings);
  return settings;
}

export function isDefinedSettings(candidate: unknown): candidate is ProjectSettings {
  return typeof candidate === 'object' && candidate !== null && defined.has(candidate as ProjectSettings);
}

/** The values `settings` has in the service that is running (the request's, inside one). */
function boundValuesOf(settings: ProjectSettings): SettingValuesByName {
  const values = currentFacilityState().projectSettings.valuesOf(settings);
  if (values === undefined) {
    throw new Error("spaceport: these settings belong to no loaded project (a project's settings are the default export of its api/settings.js)");
  }
  return values;
}

/** One service's setting values (`Runtime.projectSettings`). */
export class BoundProjectSettings implements ProjectSettingValues {
  readonly #bySettings = new Map<object, SettingValuesByName>();
  readonly #byProject = new Map<string, SettingValuesByName>();

  bind(project: string, settings: object, values: SettingValuesByName): void {
    const frozen = Object.freeze({ ...values });
    this.#bySettings.set(settings, frozen);
    this.#byProject.set(project, frozen);
  }

  valuesOf(settings: object): SettingValuesByName | undefined {
    return this.#bySettings.get(settings);
  }

  valuesOfProject(project: string): SettingValuesByName {
    return this.#byProject.get(project) ?? {};
  }
}
