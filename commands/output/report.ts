/**
 * The one way an error reaches the operator: one line on stderr (`botmesh-coord: …`), or with
 * `-o json` / `-o jsonl` one JSON object on stderr (`{"schemaVersion":1,"kind":"error","error":{…}}`),
 * and the exit code.
 */
import type { Command } from 'commander'
import { SCHEMA_VERSION } from '../lib.js'
import { describeError } from './errors.js'
import type { ExitCode } from './exit-codes.js'
import { machineFormat } from './format.js'

export function errorRecord(line: string, code: ExitCode): string {
  return JSON.stringify({ schemaVersion: SCHEMA_VERSION, kind: 'error', error: { code, message: line } })
}

/**
 * Does the command line ask for JSON (`--json`, `-o json|jsonl`, `--output=json`)? For the errors
 * commander reports while it is still reading the options.
 */
export function argvWantsJson(argv: string[] = process.argv): boolean {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--json') return true
    const v = a === '-o' || a === '--output' ? argv[i + 1] : /^(?:-o|--output=)(.+)$/.exec(a)?.[1]
    if (v === 'json' || v === 'jsonl') return true
  }
  return false
}

/** A usage line as commander reports it: one line, as JSON when JSON was asked for. */
export function usageLine(text: string): string {
  return argvWantsJson() ? `${errorRecord(text, 2)}\n` : `botmesh-coord: ${text}\n`
}

/** Print `err` for the operator and return its exit code. `hint` is appended to the line. */
export function reportError(
  cmd: Command | null,
  err: unknown,
  where: { url?: string; secrets?: string[]; names?: unknown } = {},
  hint = '',
): ExitCode {
  const { line, code } = describeError(err, where)
  const text = `${line}${hint}`
  if (cmd && machineFormat(cmd)) process.stderr.write(`${errorRecord(text, code)}\n`)
  else process.stderr.write(`botmesh-coord: ${text}\n`)
  return code
}
