import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { problemWithName } from '../projects/load.ts';
import { displayPath } from '../projects/problems.ts';
import { environmentPrefix, secretsPrefixReader } from '../projects/settings/values.ts';
import type { CommandTable } from './command.ts';
import { UsageError } from './migrate.ts';

const TEMPLATE = path.join(import.meta.dirname, 'project-template');
const USAGE = 'usage: make project NAME=<name>';

/** `make project NAME=shop` (SPEC §13): a new project that passes its own tests and `make check` as it is. */
export const scaffoldCommands = {
  project: async ([name, ...rest]) => {
    if (!name || rest.length > 0) throw new UsageError(USAGE);
    const problem = problemWithName(name) ?? secretsProblem(name);
    if (problem !== undefined) throw new UsageError(`NAME: ${problem}`);
    const projectsDir = path.resolve(process.env.PROJECTS_DIR || 'projects');
    const folder = path.join(projectsDir, name);
    mkdirSync(projectsDir, { recursive: true });
    try {
      mkdirSync(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${displayPath(folder)} already exists; choose another NAME`);
      throw error;
    }
    cpSync(TEMPLATE, folder, { recursive: true });
    for (const file of filesUnder(folder)) fillIn(file, name);
    return [
      `created ${displayPath(folder)}: api/routes.js, api/handlers.js, api/settings.js, test/routes.test.js`,
      `next: make test PROJECT=${name}, then make dev and open http://127.0.0.1:3000/docs`,
    ].join('\n');
  },
} satisfies CommandTable;

/** The template declares a secret, which the settings check would refuse to read from a variable another program reads. */
function secretsProblem(name: string): string | undefined {
  const reader = secretsPrefixReader(name);
  if (reader === undefined) return undefined;
  return `project "${name}"'s secrets would be read from ${environmentPrefix(name)}_*, which ${reader}; choose another`;
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** `__project__` is the project's name, `__PROJECT__` the prefix of its environment variables. */
function fillIn(file: string, name: string): void {
  const text = readFileSync(file, 'utf8').replaceAll('__PROJECT__', environmentPrefix(name)).replaceAll('__project__', name);
  writeFileSync(file, text);
}
