/** A CLI command: takes its arguments, returns what to print, throws to fail with one line. */
export type Command = (args: string[]) => Promise<string>;
export type CommandTable = Record<string, Command>;
