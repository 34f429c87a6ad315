import type { AnswerStall } from '../../lib/http/answer-stall.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { signSystemToken } from '../../lib/auth/tokens.ts';
import type { ExpertInput } from '../../lib/config/index.ts';
import type { Pace } from '../../lib/http/pace.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { startTestService, testDatabaseUrl, type ServiceUnderTest } from './service.ts';
import { testKnex } from './database.ts';
import { scratchFolder } from './scratch.ts';

/** `test/fixtures/projects/<name>`: one PROJECTS_DIR per scenario. */
export function fixtureProjects(name: string): string {
  return path.resolve(import.meta.dirname, '..', 'fixtures', 'projects', name);
}

export interface ProjectServiceOptions {
  expert?: ExpertInput;
  env?: Record<string, string>;
  bodyPace?: Pace;
  answerStall?: AnswerStall;
}

/**
 * Migrates the test file's database once, up front: services that tests start at the same time
 * would otherwise race to create the migrations table.
 */
export async function migrateFileDatabase(): Promise<void> {
  const knex = testKnex(await testDatabaseUrl());
  try {
    await migrateLatest(knex);
  } finally {
    await knex.destroy();
  }
}

/** The real service over a PROJECTS_DIR, closed when the test ends. */
export function startWithProjects(t: ExecutionContext | undefined, projectsDir: string, options: ProjectServiceOptions = {}): Promise<ServiceUnderTest> {
  return startTestService(t, { expert: options.expert, env: { PROJECTS_DIR: projectsDir, ...options.env }, bodyPace: options.bodyPace, answerStall: options.answerStall });
}

/** A system JWT for a made-up account of `tenant`, signed by the service's own key. */
export function tokenFor(service: ServiceUnderTest, tenant = 'default', uid = 'user-1'): Promise<string> {
  return signSystemToken(service.runtime, { uid, username: 'tester', role: 'member' }, tenant);
}

/** Writes `files` (relative path → content) under a new scratch folder outside the repository. */
export function writeTree(files: Record<string, string>, name = 'h4'): string {
  const root = scratchFolder(name);
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return root;
}

export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}
