import test from 'ava';
import fc from 'fast-check';
import { defineSettings, type SettingType } from '../../lib/facilities/index.ts';
import { checkDeclarations, typeProblem } from '../../lib/projects/settings/declarations.ts';
import { environmentName, parseEnvironmentValue } from '../../lib/projects/settings/environment.ts';
import { resolveValues } from '../../lib/projects/settings/values.ts';

const TYPES: readonly SettingType[] = ['string', 'number', 'integer', 'boolean'];
/** camelCase names from few letters, so that names differing only in case come up often. */
const settingName = fc.stringMatching(/^[ab][aAbB1]{0,3}$/);
const projectName = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,10}$/);

test('secrets never share an environment variable unless the declaration is refused for it', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(projectName, fc.uniqueArray(settingName, { minLength: 1, maxLength: 6 }), (project, names) => {
        const declarations = Object.fromEntries(names.map((name) => [name, { type: 'string', secret: true } as const]));
        const { problems } = checkDeclarations(project, 'settings.js', defineSettings(declarations));
        const variables = names.map((name) => environmentName(project, name));
        const shared = new Set(variables).size < variables.length;
        const refused = problems.some((problem) => problem.reason.includes('would both be read from'));
        return refused === shared && variables.every((variable) => /^[A-Z0-9_]+$/.test(variable));
      }),
    ),
  );
});

test('an environment value read as a type is a value of that type', (t) => {
  const text = fc.oneof(fc.string(), fc.integer().map(String), fc.double().map(String), fc.bigInt().map(String), fc.constantFrom('true', 'false'));
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.constantFrom(...TYPES), text, (type, given) => {
        const value = parseEnvironmentValue(type, given);
        return value === undefined || typeProblem(type, value) === undefined;
      }),
    ),
  );
});

/** A value no message could contain by chance. */
const secretText = fc.string({ minLength: 1, maxLength: 12 }).map((text) => `zq-secret-${text}`);
const secretValue = fc.oneof(secretText, fc.integer({ min: 900_000_001, max: 999_999_999 }), fc.constant(123.456789));

/** Resolves one setting given in the file and the environment; true when no message shows a value. */
function messagesShowNoValue(type: SettingType, secret: boolean, required: boolean, fromFile: unknown, fromEnvironment: string | null): boolean {
  const settings = defineSettings({ key: { type, secret, required } });
  const section: Record<string, unknown> = { other: 'zq-secret-unknown' };
  if (fromFile !== null) section.key = fromFile;
  const environment = fromEnvironment === null ? {} : { SHOP_KEY: fromEnvironment };
  const { problems } = resolveValues({ project: 'shop', file: '/p/shop/api/settings.js', settings }, { sections: { shop: section }, environment });
  const messages = JSON.stringify(problems);
  const values = [fromFile, fromEnvironment, 'zq-secret-unknown'].filter((value) => value !== null);
  return problems.length > 0 && values.every((value) => !messages.includes(String(value)));
}

test('no problem message shows a value from the file or the environment, right or wrong', (t) => {
  const property = fc.property(fc.constantFrom(...TYPES), fc.boolean(), fc.boolean(), fc.option(secretValue), fc.option(secretText), messagesShowNoValue);
  t.notThrows(() => fc.assert(property));
});
