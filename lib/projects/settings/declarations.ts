import { isDefinedSettings, type ProjectSettings, type SettingType } from '../../facilities/settings.ts';
import type { RouteProblem } from '../problems.ts';
import { kindOf } from '../../values/kind-of.ts';

const SETTING_TYPES: readonly SettingType[] = ['string', 'number', 'integer', 'boolean'];
const IS_OF_TYPE: Readonly<Record<SettingType, (value: unknown) => boolean>> = {
  string: (value) => typeof value === 'string',
  number: (value) => Number.isFinite(value),
  integer: (value) => Number.isSafeInteger(value),
  boolean: (value) => typeof value === 'boolean',
};
const KNOWN_PROPERTIES = new Set(['type', 'default', 'secret', 'required', 'description']);
/** camelCase: its words make the `<SETTING>` of `<PROJECT>_<SETTING>`, in upper snake case. */
const SETTING_NAME = /^[a-z][A-Za-z0-9]*$/;

export interface CheckedDeclarations {
  readonly settings: ProjectSettings | undefined;
  readonly problems: readonly RouteProblem[];
}

/** Checks a settings file's export; no unknown property, for a misspelt `secret` must not leave a secret in the logs. */
export function checkDeclarations(project: string, file: string, exported: unknown): CheckedDeclarations {
  if (!isDefinedSettings(exported)) {
    const reason = "the default export must be defineSettings({...}) from 'spaceport'";
    return { settings: undefined, problems: [{ project, source: { file }, reason }] };
  }
  const problems = Object.entries(exported.declarations).flatMap(([name, declaration]) =>
    problemsOfDeclaration(name, declaration).map((reason) => ({ project, source: { file }, reason: `setting "${name}": ${reason}` })),
  );
  return { settings: problems.length === 0 ? exported : undefined, problems };
}

function problemsOfDeclaration(name: string, declaration: unknown): string[] {
  if (declaration === null || typeof declaration !== 'object' || Array.isArray(declaration)) {
    return [`must be an object such as { type: 'string' } (got ${kindOf(declaration)})`];
  }
  const reasons: string[] = [];
  if (!SETTING_NAME.test(name)) reasons.push(`the name must be camelCase (${SETTING_NAME.source})`);
  const { type, secret, required, description } = declaration as Record<string, unknown>;
  if (!SETTING_TYPES.includes(type as SettingType)) reasons.push(`type must be one of ${SETTING_TYPES.join(', ')}`);
  for (const [property, value] of [['secret', secret], ['required', required]] as const) {
    if (value !== undefined && typeof value !== 'boolean') reasons.push(`${property} must be a boolean (got ${kindOf(value)})`);
  }
  if (description !== undefined && typeof description !== 'string') reasons.push(`description must be a string (got ${kindOf(description)})`);
  if ('default' in declaration) reasons.push(...problemsOfDefault(declaration as Record<string, unknown>));
  for (const property of Object.keys(declaration)) {
    if (!KNOWN_PROPERTIES.has(property)) reasons.push(`unknown property "${property}"`);
  }
  return reasons;
}

function problemsOfDefault(declaration: Record<string, unknown>): string[] {
  if (declaration.secret === true) return ['a secret has no default: it would be in the source'];
  const { type } = declaration;
  if (!SETTING_TYPES.includes(type as SettingType)) return [];
  const problem = typeProblem(type as SettingType, declaration.default);
  return problem === undefined ? [] : [`default ${problem}`];
}

/** Why `value` is not of `type`, naming its kind only, never the value: it may be a secret. */
export function typeProblem(type: SettingType, value: unknown): string | undefined {
  if (IS_OF_TYPE[type](value)) return undefined;
  const got = type === 'integer' && typeof value === 'number' ? 'a fraction or a number too large' : kindOf(value);
  return `must be ${describeType(type)} (got ${got})`;
}

/** `a string`, `an integer`, ...; a boolean in the environment is spelt `true` or `false`. */
export function describeType(type: SettingType): string {
  if (type === 'boolean') return 'a boolean (true or false)';
  return type === 'integer' ? 'an integer' : `a ${type}`;
}
