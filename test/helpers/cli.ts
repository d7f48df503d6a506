/**
 * Run the real botmesh-coord binary as a subprocess (the built dist/, as a user would).
 * `npm test` builds first; when running one file by hand, run `npx tsup` before.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const BIN = fileURLToPath(new URL('../../bin/botmesh-coord.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export function runCli(
  args: string[],
  options: { env?: Record<string, string | undefined>; input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, ...options.env })) {
      if (v !== undefined) env[k] = v
    }
    // Never pick up a REDIS_URL from the environment by accident: tests pass --url or env explicitly.
    if (!options.env || !('REDIS_URL' in options.env)) delete env.REDIS_URL
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(
          `botmesh-coord ${args.join(' ')} did not finish within ${options.timeoutMs ?? 20_000}ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      )
    }, options.timeoutMs ?? 20_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    if (options.input !== undefined) child.stdin.end(options.input)
    else child.stdin.end()
  })
}

/** Parse --json output (fails the test with the raw output when it is not JSON). */
export function parseJson<T = Record<string, unknown>>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`)
  }
}
