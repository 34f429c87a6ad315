/** Names a caller may see: every one, or only those listed (an empty list grants none). */
export type NameGrant = { readonly all: true } | { readonly all: false; readonly names: readonly string[] };

/** What an account may see of the spaces (SPEC §6.2). */
export interface SpaceAccess {
  readonly admin: boolean;
  /** Spaces the account may open; names of deleted or trashed spaces simply match nothing (SPEC §6.3, §6.7). */
  readonly spaces: NameGrant;
  /** Schemas the account may read. */
  readonly schemas: NameGrant;
}

/** The account fields that decide access; accounts are free-form documents, so nothing is trusted. */
export interface AccountPermissions {
  readonly role?: unknown;
  readonly spaces?: unknown;
  readonly schemas?: unknown;
}

const EVERYTHING: NameGrant = { all: true };
const ALL_SCHEMAS = '*';

/**
 * Admins see everything. Otherwise an empty or absent `spaces` list means every space, while an
 * empty or absent `schemas` list means no schema and `["*"]` means every schema (SPEC §5.1).
 */
export function spaceAccessOf(account: AccountPermissions): SpaceAccess {
  if (account.role === 'admin') return { admin: true, spaces: EVERYTHING, schemas: EVERYTHING };
  const schemas = listedNames(account.schemas);
  return {
    admin: false,
    spaces: isUnset(account.spaces) ? EVERYTHING : { all: false, names: listedNames(account.spaces) },
    schemas: schemas.includes(ALL_SCHEMAS) ? EVERYTHING : { all: false, names: schemas },
  };
}

function isUnset(list: unknown): boolean {
  return list === undefined || list === null || (Array.isArray(list) && list.length === 0);
}

/** The string entries of a list; anything malformed grants nothing rather than everything. */
function listedNames(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : [];
}
