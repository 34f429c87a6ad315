import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import type { ExpertInput } from '../../lib/config/index.ts';
import { saveAccount, type AccountInput, type Account } from '../../lib/auth/accounts.ts';
import { startTestService, type ServiceUnderTest } from './service.ts';

/** The repository's own projects folder, where the sample lives. */
export const REPO_PROJECTS_DIR = fileURLToPath(new URL('../../projects', import.meta.url));

/** Every sample route answers at both mounts (SPEC §8.2). */
export const SAMPLE_PREFIXES = ['/api/sample', '/api/project'] as const;

/** Starts the real service over the repository's projects, the sample being the default one. */
export function startSampleService(
  t: ExecutionContext | undefined,
  expert: ExpertInput = {},
  env: Record<string, string> = {},
): Promise<ServiceUnderTest> {
  return startTestService(t, {
    env: { PROJECTS_DIR: REPO_PROJECTS_DIR, ...env },
    expert: { ...expert, projects: { default: 'sample', ...expert.projects } },
  });
}

/** Creates an account in `tenant` the way `make user` does (hashed password). */
export async function createAccount(service: ServiceUnderTest, tenant: string, input: AccountInput): Promise<Account> {
  return (await saveAccount(service.runtime.tenantDatabase, tenant, input)).account;
}

/** The stored password hash of an account, read straight from the table, for leak checks. */
export async function storedPasswordHash(service: ServiceUnderTest, tenant: string, username: string): Promise<string> {
  const row = await service.runtime.knex('documents')
    .where({ tenant, collection: 'accounts' })
    .whereRaw("doc->>'username' = ?", [username])
    .first<{ doc: { password: string } } | undefined>('doc');
  if (!row) throw new Error(`no account ${username} in ${tenant}`);
  return row.doc.password;
}

/** JSON POST helper. */
export function postJson(service: ServiceUnderTest, pathname: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return service.fetch(pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}
