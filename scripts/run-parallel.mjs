// Run several npm scripts at once (`node scripts/run-parallel.mjs typecheck lint`): the checks before
// `npm test` are independent, and on two cores running them side by side saves a quarter of a minute.
// Each script's output is printed whole when it ends, so the two never interleave; the exit code is
// the first failing script's (0 when all pass).
import { spawn } from 'node:child_process'

const names = process.argv.slice(2)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const runs = names.map(
  (name) =>
    new Promise((resolve) => {
      const child = spawn(npm, ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] })
      const out = []
      child.stdout.on('data', (d) => out.push(d))
      child.stderr.on('data', (d) => out.push(d))
      child.on('error', (err) => resolve({ name, code: 1, text: `${err.message}\n` }))
      child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), text: Buffer.concat(out).toString() }))
    }),
)

let failed = 0
for (const run of runs) {
  const { name, code, text } = await run
  if (text) process.stdout.write(text)
  if (code !== 0) {
    console.error(`npm run ${name} failed (exit ${code})`)
    failed ||= code
  }
}
process.exit(failed)
