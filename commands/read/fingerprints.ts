/**
 * The deployed flows' fingerprints, as the operator gives them: `--fingerprint flow=fp` (repeatable;
 * a bare `fp` is the fingerprint of the flow of the one checkpoint in question), or
 * `--fingerprint-file <file>` (a JSON object `{"flow": "fp"}`, or one `flow=fp` per line; # comments).
 * `checkpoints ls`, `chat inspect --explain` and `doctor` take them the same way.
 */
import { readFileSync } from 'node:fs'
import { InvalidArgumentError, Option, type Command } from 'commander'
import { usage } from '../output/errors.js'
import { checkReadableFile } from '../target.js'

export interface FingerprintFlags {
  fingerprint?: string[]
  fingerprintFile?: string
}

/** A bare fingerprint (no flow) given to --fingerprint. */
export const BARE = ''

function pair(v: string, where: string): [string, string] {
  const i = v.lastIndexOf('=')
  if (i < 0) return [BARE, v.trim()]
  const flow = v.slice(0, i).trim()
  const fp = v.slice(i + 1).trim()
  if (!flow || !fp) throw new InvalidArgumentError(`${where}: expected flow=fingerprint, not ${JSON.stringify(v)}`)
  return [flow, fp]
}

export function fingerprintOptions(cmd: Command, bare = false): Command {
  return cmd
    .addOption(
      new Option(
        '--fingerprint <flow=fp>',
        `the deployed fingerprint of a flow (repeat for several flows)${bare ? "; a bare fingerprint is the chat's flow's" : ''}: an ephemeral checkpoint of another version will not be resumed (changed)`,
      ).argParser((v: string, prev: string[] | undefined) => {
        const [flow] = pair(v, '--fingerprint')
        if (flow === BARE && !bare) throw new InvalidArgumentError(`expected flow=fingerprint, not ${JSON.stringify(v)}`)
        return [...(prev ?? []), v]
      }),
    )
    .option(
      '--fingerprint-file <file>',
      'the deployed fingerprints from a file: a JSON object {"flow": "fingerprint"}, or flow=fingerprint lines',
    )
}

/** The deployed fingerprints given (flow → fp; BARE for a bare one), or null when none were. */
export function deployedFingerprints(o: FingerprintFlags): Record<string, string> | null {
  const out: Record<string, string> = {}
  if (o.fingerprintFile !== undefined) {
    checkReadableFile(o.fingerprintFile, '--fingerprint-file')
    const text = readFileSync(o.fingerprintFile, 'utf8')
    const where = `--fingerprint-file ${o.fingerprintFile}`
    if (/^\s*\{/.test(text)) {
      let doc: unknown
      try {
        doc = JSON.parse(text)
      } catch {
        throw usage(`${where}: not valid JSON`)
      }
      for (const [flow, fp] of Object.entries(doc as Record<string, unknown>)) {
        if (typeof fp !== 'string' || !fp) throw usage(`${where}: the fingerprint of ${JSON.stringify(flow)} is not a string`)
        out[flow] = fp
      }
    } else {
      text.split('\n').forEach((raw, i) => {
        const line = raw.replace(/#.*$/, '').trim()
        if (!line) return
        if (!line.includes('=')) throw usage(`${where}:${i + 1}: expected flow=fingerprint, not ${JSON.stringify(line)}`)
        const [flow, fp] = pair(line, `${where}:${i + 1}`)
        out[flow] = fp
      })
    }
  }
  for (const v of o.fingerprint ?? []) {
    const [flow, fp] = pair(v, '--fingerprint')
    out[flow] = fp
  }
  return Object.keys(out).length ? out : null
}
