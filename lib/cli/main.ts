import { accountCommands } from './accounts.ts';
import { checkCommands } from './check-projects.ts';
import { migrationCommands } from './migrate.ts';
import { routeCommands } from './routes.ts';
import { scaffoldCommands } from './scaffold.ts';
import type { CommandTable } from './command.ts';
import { runMain } from '../process/run-main.ts';

/** The make targets' entry point: `main.ts <command> [args...]`; failures are one line, exit 1. */
const commands: CommandTable = { ...migrationCommands, ...routeCommands, ...accountCommands, ...checkCommands, ...scaffoldCommands };

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const command = name === undefined ? undefined : commands[name];
  if (command === undefined) throw new Error(`unknown command "${name ?? ''}"; one of: ${Object.keys(commands).join(', ')}`);
  const output = await command(args);
  if (output) process.stdout.write(`${output}\n`);
  // Done: whatever a command left open (a pool, a timer) does not keep the process.
  process.exit(0);
}

runMain(main, process.argv[2] ?? 'spaceport', { firstLineOnly: true });
