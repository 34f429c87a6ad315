import test from 'ava';
import { loadConfig } from '../../lib/config/index.ts';
import { withFacilityState } from '../../lib/facilities/current.ts';
import { defineSettings, type SettingValues } from '../../lib/facilities/index.ts';
import { BoundProjectSettings } from '../../lib/facilities/settings.ts';

const declarations = {
  apiKey: { type: 'string', secret: true, required: true },
  pageSize: { type: 'integer', default: 20 },
  label: { type: 'string' },
  live: { type: 'boolean' },
} as const;

test('defineSettings keeps the declarations as they are', (t) => {
  const settings = defineSettings(declarations);
  t.is(settings.declarations, declarations);
  t.true(Object.isFrozen(settings));
});

test('reading settings that no loaded project declares says what to do', (t) => {
  const { config } = loadConfig({ env: { JWT_SECRET: 'a-secret-that-is-long-enough' }, expert: {} });
  const settings = defineSettings(declarations);
  withFacilityState({ config, projectSettings: new BoundProjectSettings() }, () => {
    t.throws(() => settings.get('apiKey'), { message: /belong to no loaded project \(a project's settings are the default export of its api\/settings\.js\)/ });
  });
});

test('values are read from the service they were bound to', (t) => {
  const { config } = loadConfig({ env: { JWT_SECRET: 'a-secret-that-is-long-enough' }, expert: {} });
  const projectSettings = new BoundProjectSettings();
  const settings = defineSettings(declarations);
  projectSettings.bind('shop', settings, { apiKey: 'k', pageSize: 5 });
  withFacilityState({ config, projectSettings }, () => {
    t.is(settings.get('apiKey'), 'k');
    t.is(settings.get('pageSize'), 5);
    t.is(settings.get('label'), undefined);
  });
});

/** Its types are the test, checked by `make check`: values are typed after their declarations. */
function typedValues(values: SettingValues<typeof declarations>): [string, number, string | undefined, boolean | undefined] {
  const apiKey: string = values.apiKey; // required: always set
  const pageSize: number = values.pageSize; // a default: always set
  // @ts-expect-error a setting without a default or `required` may be unset
  const label: string = values.label;
  // @ts-expect-error an undeclared setting does not exist
  void values.other;
  return [apiKey, pageSize, label, values.live];
}

test('values are typed after their declarations', (t) => {
  t.deepEqual(typedValues({ apiKey: 'k', pageSize: 1, label: undefined, live: true }), ['k', 1, undefined, true]);
});
