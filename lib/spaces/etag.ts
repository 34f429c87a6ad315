import { createHash } from 'node:crypto';
import type { SpaceAccess } from './access.ts';
import type { AllowedVersions, StoredSpace } from './store.ts';

const VERSION = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * An admin's is the version; another account's adds a digest of the schemas it is shown, so a
 * change of its permissions changes the validator too (a strong ETag names one representation).
 */
export function etagOf(stored: StoredSpace, access: SpaceAccess): string {
  if (access.admin) return `"${stored.version}"`;
  const shown = createHash('sha256').update(JSON.stringify(stored.space.schemas)).digest('hex').slice(0, 16);
  return `"${stored.version}.${shown}"`;
}

/** Undefined for no `If-Match` or `*`; strong comparison: a weak or foreign tag matches nothing. */
export function allowedVersions(ifMatch: string | undefined): AllowedVersions {
  if (ifMatch === undefined || ifMatch.trim() === '*') return undefined;
  return entityTags(ifMatch)
    .filter((tag) => !tag.startsWith('W/'))
    .map((tag) => tag.slice(1, -1))
    .filter((version) => VERSION.test(version));
}

/** Whether `If-None-Match` names `etag` (weak comparison) or is `*`: a GET then answers 304. */
export function noneMatchHolds(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return entityTags(ifNoneMatch).some((tag) => tag.replace(/^W\//, '') === etag);
}

/** The entity tags of a header value: `"a", W/"b"`. */
function entityTags(value: string): string[] {
  return value.match(/(?:W\/)?"[^"]*"/g) ?? [];
}
