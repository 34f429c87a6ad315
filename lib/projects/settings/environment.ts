import type { SettingType, SettingValue } from '../../facilities/settings.ts';

/**
 * `<PROJECT>_<SETTING>` in upper snake case: `sample` and `apiKey` give `SAMPLE_API_KEY`,
 * `my-shop` and `pageSize` give `MY_SHOP_PAGE_SIZE`.
 */
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
