// The bare packages a built entry loads before it runs (static imports only, followed through its chunks).
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

export function staticImports(entry) {
  const seen = new Set()
  const packages = new Set()
  const visit = (file) => {
    if (seen.has(file)) return
    seen.add(file)
    const src = readFileSync(file, 'utf8')
    const specs = [...src.matchAll(/^import\s+["']([^"']+)["']/gm), ...src.matchAll(/^import\s+[^"';]*?\bfrom\s*["']([^"']+)["']/gm)]
    for (const m of specs) {
      const spec = m[1]
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec))
      else
        packages.add(
          spec.startsWith('node:')
            ? spec
            : spec
                .split('/')
                .slice(0, spec.startsWith('@') ? 2 : 1)
                .join('/'),
        )
    }
  }
  visit(resolve(entry))
  return { files: [...seen], packages: [...packages].sort() }
}

if (process.argv[2]) console.log(JSON.stringify(staticImports(process.argv[2]), null, 1))
