import { parseArgs } from 'node:util';
import { findAccountByUsername, saveAccount, type AccountInput } from '../auth/accounts.ts';
import { signSystemToken } from '../auth/tokens.ts';
import type { Runtime } from '../core/runtime.ts';
import { createTenant } from '../tenancy/index.ts';
import { isTenantName } from '../values/tenant-name.ts';
import type { CommandTable } from './command.ts';
import { withRuntime } from './database.ts';
import { UsageError } from './migrate.ts';

const USAGE = {
  tenant: 'usage: make tenant NAME=<tenant>',
  user: 'usage: make user TENANT=<tenant> USERNAME=<name> PASSWORD=<password> [ROLE=admin|member] [SPACES=a,b] [SCHEMAS=x,y]',
  token: 'usage: make token TENANT=<tenant> USERNAME=<name>',
} as const;

const USER_OPTIONS = {
  tenant: { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  role: { type: 'string' },
  spaces: { type: 'string' },
  schemas: { type: 'string' },
} as const;

type Flags = Partial<Record<keyof typeof USER_OPTIONS, string>>;

/** `make tenant`, `make user`, `make token` (SPEC §13). */
export const accountCommands: CommandTable = {
  tenant: async ([name, ...rest]) => {
    if (!name || rest.length > 0) throw new UsageError(USAGE.tenant);
    if (!isTenantName(name)) throw new UsageError(invalidTenantMessage(name));
    return withRuntime(async ({ knex }) => ((await createTenant(knex, name)) ? `created tenant ${name}` : `tenant ${name} already exists`));
  },
  user: async (args) => {
    const flags = parseFlags(args, USAGE.user);
    const tenant = required(flags, 'tenant', USAGE.user);
    const input = accountInput(flags, required(flags, 'username', USAGE.user));
    return withRuntime(async (runtime) => {
      await requireTenant(runtime, tenant);
      const { account, created } = await saveAccount(runtime.tenantDatabase, tenant, input, { actor: { cli: true } });
      return `${created ? 'created' : 'updated'} account ${account.username} (uid ${account.uid}, role ${account.role}) in tenant ${tenant}`;
    });
  },
  token: async (args) => {
    const flags = parseFlags(args, USAGE.token);
    const tenant = required(flags, 'tenant', USAGE.token);
    const username = required(flags, 'username', USAGE.token);
    return withRuntime(async (runtime) => {
      await requireTenant(runtime, tenant);
      const account = await findAccountByUsername(runtime.tenantDatabase, tenant, username);
      if (account === undefined) throw new UsageError(`no account "${username}" in tenant ${tenant}`);
      return signSystemToken(runtime, { ...account, tenant }, tenant);
    });
  },
};

function parseFlags(args: string[], usage: string): Flags {
  try {
    return parseArgs({ args, options: USER_OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}; ${usage}`);
  }
}

function required(flags: Flags, name: 'tenant' | 'username', usage: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`${name.toUpperCase()} is required; ${usage}`);
  return value;
}

/** Only the fields given become part of the input, so an update keeps the others. */
function accountInput(flags: Flags, username: string): AccountInput {
  const input: AccountInput = { username };
  if (flags.password !== undefined) input.password = flags.password;
  if (flags.role !== undefined) {
    if (flags.role !== 'admin' && flags.role !== 'member') throw new UsageError(`ROLE must be admin or member, not "${flags.role}"`);
    input.role = flags.role;
  }
  if (flags.spaces !== undefined) input.spaces = list(flags.spaces);
  if (flags.schemas !== undefined) input.schemas = list(flags.schemas);
  return input;
}

/** `a, b` → `["a", "b"]`; an empty value gives the empty list, which clears it. */
function list(value: string): string[] {
  return value.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
}

async function requireTenant(runtime: Runtime, tenant: string): Promise<void> {
  if (!isTenantName(tenant)) throw new UsageError(invalidTenantMessage(tenant));
  if (!(await runtime.tenants.exists(tenant))) throw new UsageError(`unknown tenant "${tenant}" (create it with make tenant NAME=${tenant})`);
}

function invalidTenantMessage(name: string): string {
  return `"${name}" is not a valid tenant name (letters, digits, _ and -, starting with a letter or digit, at most 63)`;
}
