/**
 * The docs are tested: every TypeScript / JavaScript snippet in README.md and docs/*.md runs as
 * written (transpiled, never edited) against a private redis-server, and the pages hold together
 * (README length, links to pages that exist, no tracker words).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import ts from 'typescript'
import { Redis } from 'ioredis'
import { startRedis, type RedisProc } from '../helpers/redis.js'
import { PAGES, ROOT, snippets } from './markdown.js'

const runnable = PAGES.flatMap(snippets).filter((s) => ['ts', 'js', 'typescript', 'javascript'].includes(s.lang))

describe('documentation', () => {
  let redis: RedisProc
  let dir: string
  beforeAll(async () => {
    redis = await startRedis()
    // A folder where `import 'botmesh-coord'` resolves to this package (its exports, its dist/).
    dir = mkdtempSync(join(tmpdir(), 'botmesh-doc-snippets-'))
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(ROOT, join(dir, 'node_modules', 'botmesh-coord'), 'dir')
    // What an application brings itself (the metrics snippet passes its prom-client to registerMetrics).
    symlinkSync(join(ROOT, 'node_modules', 'prom-client'), join(dir, 'node_modules', 'prom-client'), 'dir')
  })
  afterAll(async () => {
    await redis?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('has library snippets to run', () => {
    expect(runnable.filter((s) => s.page === 'docs/library.md').length).toBeGreaterThanOrEqual(4)
    expect(runnable.some((s) => s.page === 'README.md')).toBe(true)
  })

  it.each(runnable.map((s) => [`${s.page}:${s.line}`, s] as const))(
    '%s runs as written',
    async (_where, s) => {
      const client = new Redis(redis.url)
      await client.flushall()
      await client.quit()
      const js = ts.transpileModule(s.code, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText
      const file = join(dir, `snippet-${s.page.replace(/\W/g, '_')}-${s.line}.mjs`)
      writeFileSync(file, js)
      const r = spawnSync(process.execPath, [file], {
        cwd: dir,
        env: { ...process.env, REDIS_URL: redis.url },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(r.status, `${s.page}:${s.line} exited ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0)
      expect(r.stderr).toBe('')
    },
    70_000,
  )
})

describe('pages', () => {
  it('README reads in five minutes: under 250 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThan(250)
  })

  it('every relative link points at a file that exists', () => {
    const missing: string[] = []
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8')
      for (const m of text.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
        const target = m[1]!
        if (/^[a-z]+:/.test(target)) continue
        if (!existsSync(join(ROOT, dirname(page), target))) missing.push(`${page}: ${target}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('README links every page of docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const unlinked = PAGES.filter((p) => p.startsWith('docs/') && !readme.includes(`](${p})`))
    expect(unlinked).toEqual([])
  })

  it('no tracker words in user docs', () => {
    const found: string[] = []
    for (const page of PAGES) {
      readFileSync(join(ROOT, page), 'utf8')
        .split('\n')
        .forEach((l, i) => {
          if (/\b(issue|ticket #|todo|fixme)\s*#?\d+/i.test(l) || /\bissues? \d/i.test(l)) found.push(`${page}:${i + 1}: ${l.trim()}`)
        })
    }
    expect(found).toEqual([])
  })
})
