// Run several npm scripts at once (`node scripts/run-parallel.mjs typecheck lint:code vitest`): `npm
// test` runs the type check and ESLint beside the test files, which leave a core idle now and then
// while they wait on Redis and the CLI's processes. The last script's output streams as it comes (the
// tests' progress); each other script's is printed whole when it ends, so theirs never interleave.
// The exit code is the first failing script's (0 when all pass).
import { spawn } from 'node:child_process'

const names = process.argv.slice(2)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const runs = names.map(
  (name, i) =>
    new Promise((resolve) => {
      const live = i === names.length - 1
      const child = spawn(npm, ['run', '--silent', name], { stdio: ['ignore', live ? 'inherit' : 'pipe', live ? 'inherit' : 'pipe'] })
      const out = []
      if (!live) {
        child.stdout.on('data', (d) => out.push(d))
        child.stderr.on('data', (d) => out.push(d))
      }
      child.on('error', (err) => resolve({ name, code: 1, text: `${err.message}\n` }))
      child.on('close', (code, signal) => {
        const text = Buffer.concat(out).toString()
        // Printed as soon as it ends, not after the scripts named before it.
        if (text) process.stdout.write(text)
        resolve({ name, code: code ?? (signal ? 1 : 0) })
      })
    }),
)

let failed = 0
for (const run of runs) {
  const { name, code } = await run
  if (code !== 0) {
    console.error(`npm run ${name} failed (exit ${code})`)
    failed ||= code
  }
}
process.exit(failed)
