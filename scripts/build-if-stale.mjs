// `prepare`: build dist/ unless it is newer than every source file. `npm install` runs it, and so
// does `npx botmesh-coord` in the package's own folder (npm links the folder and prepares it again):
// a fresh build there would cost half a minute for nothing.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(import.meta.url), '..', '..')
const output = join(root, 'dist', 'commands', 'cli.js')

function newest(path) {
  let st
  try {
    st = statSync(path)
  } catch {
    return 0
  }
  if (!st.isDirectory()) return st.mtimeMs
  let max = 0
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)))
  return max
}

let built = 0
try {
  built = statSync(output).mtimeMs
} catch {
  // not built yet
}
const sources = Math.max(...['src', 'commands', 'tsup.config.ts', 'package.json', 'tsconfig.json'].map((p) => newest(join(root, p))))
if (built > sources && process.env.BOTMESH_FORCE_BUILD !== '1') process.exit(0)

const r = spawnSync(process.execPath, [join(root, 'node_modules', 'tsup', 'dist', 'cli-default.js')], { cwd: root, stdio: 'inherit' })
process.exit(r.status ?? 1)
