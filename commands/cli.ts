import { Command } from 'commander'
import { PACKAGE_VERSION } from '../src/version.js'

/** The botmesh-coord entry: registers commands and parses. */
export function buildProgram(): Command {
  const program = new Command('botmesh-coord')
    .description('See and safely change the Redis coordination state of replicated botmesh bots')
    .version(PACKAGE_VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(run botmesh-coord --help for usage)')
  return program
}

await buildProgram().parseAsync(process.argv)
