import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildServerOptions } from './processes.ts';

const MAIN = path.resolve(import.meta.dirname, '../../lib/main.ts');

/** What every spaceport process of one bench run shares. */
export interface ServiceSetup {
  readonly databaseUrl: string;
  readonly jwtSecret: string;
  /** Holds the expert file and a data folder, so the run leaves `./.data` alone. */
  readonly root: string;
}

/**
 * The public-route budget raised out of reach: the limiter still runs and still writes its
 * headers on every answer, but a benchmark of 429s would measure nothing.
 */
const EXPERT_CONFIG = { rateLimit: { public: { windowMs: 60_000, max: 1_000_000_000 } } };

export function serviceSetup(databaseUrl: string, root: string): ServiceSetup {
  return { databaseUrl, jwtSecret: randomBytes(32).toString('base64url'), root };
}

/** How to run the real service, `node lib/main.ts`, over `projectsDir`: ready once `/healthz` answers. */
export function serviceProcess(setup: ServiceSetup, name: string, projectsDir: string, defaultProject?: string): ChildServerOptions {
  const expertFile = path.join(setup.root, `expert-${name.replace(/\W+/g, '-')}.json`);
  const expert = defaultProject ? { ...EXPERT_CONFIG, projects: { default: defaultProject } } : EXPERT_CONFIG;
  writeFileSync(expertFile, JSON.stringify(expert));
  const dataDir = path.join(setup.root, 'data');
  mkdirSync(dataDir, { recursive: true });
  return {
    name,
    script: MAIN,
    readyPath: '/healthz',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATABASE_URL: setup.databaseUrl,
      JWT_SECRET: setup.jwtSecret,
      PROJECTS_DIR: projectsDir,
      EXPERT_CONFIG: expertFile,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    },
  };
}
