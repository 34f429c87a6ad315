import { accountCommands } from './accounts.ts';
import { checkCommands } from './check-projects.ts';
import { migrationCommands } from './migrate.ts';
import { routeCommands } from './routes.ts';
import { scaffoldCommands } from './scaffold.ts';
import type { CommandTable } from './command.ts';

/** The make targets' entry point: `main.ts <command> [args...]`; failures are one line, exit 1. */
const commands: CommandTable = { ...migrationCommands, ...routeCommands, ...accountCommands, ...checkCommands, ...scaffoldCommands };

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const command = name === undefined ? undefined : commands[name];
  if (command === undefined) throw new Error(`unknown command "${name ?? ''}"; one of: ${Object.keys(commands).join(', ')}`);
  const output = await command(args);
  if (output) process.stdout.write(`${output}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${name()}: ${(error as Error).message.split('\n')[0]}\n`);
    process.exit(1);
  },
);

function name(): string {
  return process.argv[2] ?? 'spaceport';
}
