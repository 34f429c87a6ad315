import test from 'ava';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defineSettings, type SettingType } from '../../lib/facilities/index.ts';
import { typeProblem } from '../../lib/projects/settings/declarations.ts';
import { environmentName, parseEnvironmentValue, resolveValues, sharedVariableProblems } from '../../lib/projects/settings/values.ts';

const TYPES: readonly SettingType[] = ['string', 'number', 'integer', 'boolean'];
/** camelCase names from few letters, so that names differing only in case come up often. */
const settingName = fc.stringMatching(/^[ab][aAbB1]{0,3}$/);
const projectName = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,10}$/);

/** Names whose variables often meet: random ones, and ones that meet each other or the service's. */
const declaredSecret = fc.record({
  project: fc.oneof(projectName, fc.constantFrom('adv', 'adv-api', 'adv_api', 'database', 'jwt', 'node', 'uv')),
  setting: fc.oneof(settingName, fc.constantFrom('apiKey', 'key', 'url', 'secret', 'options', 'threadpoolSize')),
});
/** What the service (its configuration, the keeper) and Node.js read themselves. */
const SERVICE_OWN = /^(?:PORT|HOST|DATABASE_URL|JWT_SECRET|EXPERT_CONFIG|PROJECTS_DIR|REDIS_URL|REDIS_CLUSTER_NODES|LOG_LEVEL|DATA_DIR|XDG_RUNTIME_DIR)$|^(?:NODE|UV)_/;

test('a project is refused exactly when one of its secrets shares its variable, or would read one the service or Node.js reads', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.uniqueArray(declaredSecret, { selector: ({ project, setting }) => `${project}.${setting}`, maxLength: 8 }), (declared) => {
        const secrets = declared.map(({ project, setting }) => ({ project, setting, file: `/p/${project}/api/settings.js` }));
        const problems = sharedVariableProblems(secrets);
        const variables = secrets.map(({ project, setting }) => environmentName(project, setting));
        const expected = new Set(
          secrets.filter((_, index) => SERVICE_OWN.test(variables[index]) || variables.indexOf(variables[index]) !== variables.lastIndexOf(variables[index])).map(({ project }) => project),
        );
        const refused = new Set(problems.map(({ project }) => project));
        return (
          new Set(problems.map(({ project, reason }) => `${project}: ${reason}`)).size === problems.length &&
          refused.size === expected.size &&
          [...refused].every((project) => expected.has(project)) &&
          variables.every((variable) => /^[A-Z0-9_]+$/.test(variable))
        );
      }),
    ),
  );
});

/** Every environment variable the service's own code reads (`process.env.X`, `env.X`, `environment.X`). */
function variablesReadByTheService(): string[] {
  const lib = path.resolve(import.meta.dirname, '../../lib');
  const sources = readdirSync(lib, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.startsWith('cli/project-template'));
  const names = sources.flatMap((file) => [...readFileSync(path.join(lib, file), 'utf8').matchAll(/\b(?:process\.env|env|environment)(?:\.|\[')([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]));
  return [...new Set(names)].sort();
}

test('no project secret is read from a variable the service reads', (t) => {
  const read = variablesReadByTheService();
  t.true(read.includes('DATABASE_URL') && read.includes('UV_THREADPOOL_SIZE'), read.join(' '));
  // `<PROJECT>_<SETTING>` has an underscore: PORT or PATH is no project's.
  for (const variable of read.filter((name) => name.includes('_'))) {
    const [first, ...rest] = variable.toLowerCase().split('_');
    const setting = rest.map((word, index) => (index === 0 ? word : word[0].toUpperCase() + word.slice(1))).join('');
    t.is(environmentName(first, setting), variable);
    t.is(sharedVariableProblems([{ project: first, setting, file: 'settings.js' }]).length, 1, variable);
  }
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
