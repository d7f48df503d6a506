/**
 * Every `botmesh-coord …` command line shown in README.md and docs/ (in sh and console blocks) is one
 * the CLI accepts: run as written against the state of docs/redis-layout.md's example (prefix shop),
 * none ends in a usage error (exit 2) or an internal error (exit 70). Lines that run until
 * interrupted (watch, exporter, demo, -f, -w, --wait) are only parsed: their --help must work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { startRedis, type RedisProc } from '../helpers/redis.js'
import { runCli } from '../helpers/cli.js'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PAGES, ROOT, snippets, words } from './markdown.js'

interface Line {
  where: string
  env: Record<string, string>
  args: string[]
  /** The docs show this line failing on purpose (its output is a `botmesh-coord: …` error line). */
  showsError: boolean
}

/** The botmesh-coord command lines of the docs: `$ ` lines of console blocks, every line of sh blocks. */
function commandLines(): Line[] {
  const out: Line[] = []
  for (const s of PAGES.flatMap(snippets).filter((x) => x.lang === 'sh' || x.lang === 'console')) {
    const lines = s.code.split('\n')
    // Continuation lines (a trailing backslash) belong to the line before.
    const joined: string[] = []
    for (const l of lines) {
      if (joined.length && joined.at(-1)!.endsWith('\\')) joined[joined.length - 1] = `${joined.at(-1)!.slice(0, -1)} ${l.trim()}`
      else joined.push(l)
    }
    joined.forEach((raw, i) => {
      let l = raw
      if (s.lang === 'console') {
        if (!l.startsWith('$ ')) return
        l = l.slice(2)
      }
      l = l
        .replace(/\s+#.*$/, '')
        .split(/\s[|>]\s|\s2>/)[0]!
        .trim()
      if (!/(^|\s)botmesh-coord\s/.test(l) || /[<…$`]|\*\*\*/.test(l.replace(/<\(.*\)/, ''))) return
      if (/^(source|npx|npm|node|export)\b/.test(l)) return
      const ws = words(l)
      const env: Record<string, string> = {}
      while (ws.length && /^[A-Z_]+=/.test(ws[0]!)) {
        const [k, ...v] = ws.shift()!.split('=')
        env[k!] = v.join('=')
      }
      if (ws.shift() !== 'botmesh-coord') return
      const next = joined.slice(i + 1)
      const output = next.slice(
        0,
        Math.max(
          0,
          next.findIndex((x) => x.startsWith('$ ')),
        ) || next.length,
      )
      const showsError = output.some((x) => x.startsWith('botmesh-coord: ') && !x.startsWith('botmesh-coord: warning'))
      out.push({ where: `${s.page}:${s.line + i}`, env, args: ws, showsError })
    })
  }
  return out
}

/** Snapshot files the docs name: made in this test's directory before the lines run. */
const SNAPSHOT_FILES = ['incident.json.gz', 'before.json.gz', 'after.json.gz']

const REHEARSALS = ['hang', 'kill', 'freeze', 'start', 'close-transport', 'open-transport', 'yield', 'stale-write', 'deploy-flow', 'status']
/** The demo itself (not its rehearsal commands, which ask a running demo and end), the dashboard, followers. */
const LONG_RUNNING = (args: string[]) =>
  args.some((a) => ['watch', 'exporter', '-f', '--follow', '-w', '--watch', '--wait'].includes(a)) ||
  (args.includes('demo') && !REHEARSALS.includes(args[args.indexOf('demo') + 1] ?? '')) ||
  args.at(-1) === 'completion'

describe('documented command lines', () => {
  let redis: RedisProc
  let dir: string
  const lines = commandLines()
  beforeAll(async () => {
    redis = await startRedis()
    // The contexts the docs use, on this Redis.
    dir = mkdtempSync(join(tmpdir(), 'botmesh-doc-lines-'))
    writeFileSync(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nnot a real certificate\n-----END CERTIFICATE-----\n')
    writeFileSync(join(dir, 'password'), 'not-the-password\n')
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        'current-context': null,
        // demo: the context `botmesh-coord demo` writes, which the commands it prints name.
        contexts: {
          prod: { url: redis.url, prefix: 'shop' },
          staging: { url: redis.url, prefix: 'shop' },
          demo: { url: redis.url, prefix: 'demo' },
        },
      }),
    )
    const block = snippets('docs/redis-layout.md').find((s) => s.lang === 'redis')!
    const client = new Redis(redis.url)
    const [s, us] = await client.time()
    const now = Number(s) * 1000 + Math.floor(Number(us) / 1000)
    for (const line of block.code.split('\n').filter((l) => l.trim())) {
      const [cmd, ...args] = words(line.replace(/<now([+-]\d+)?>/g, (_, d: string | undefined) => String(now + Number(d ?? 0))))
      await client.call(cmd!, ...args)
    }
    await client.quit()
    // The snapshots the docs replay (--from incident.json.gz, snapshot diff …): files of this test.
    for (const f of SNAPSHOT_FILES) {
      const r = await runCli(['--url', redis.url, '--prefix', 'shop', 'snapshot', '-o', join(dir, f)])
      if (r.code !== 0) throw new Error(`snapshot -o ${f}: ${r.stderr}`)
    }
  })
  afterAll(async () => {
    await redis?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('are found in the docs', () => {
    expect(lines.length).toBeGreaterThan(40)
  })

  it('are accepted by the CLI (no usage or internal error)', async () => {
    const bad: string[] = []
    const queue = [...lines]
    let n = 0
    const worker = async () => {
      for (let l = queue.shift(); l; l = queue.shift()) {
        const explicitTarget = l.args.includes('--url') || 'REDIS_URL' in l.env
        // The user's own files the docs name (a CA, a password file) stand in as files of this test.
        const own = (a: string) =>
          /^(\/etc\/ssl\/|~\/)/.test(a)
            ? join(dir, a.endsWith('.pem') ? 'ca.pem' : 'password')
            : /^[\w.-]+\.jsonl?(\.gz)?$/.test(a)
              ? join(dir, a)
              : a
        const given = l.args.map(own)
        const env = Object.fromEntries(Object.entries(l.env).map(([k, v]) => [k, own(v)]))
        const args = LONG_RUNNING(given) ? [...given, '--help'] : given
        // Each line its own copy of the config file: a documented set-context does not change the others.
        const config = join(dir, `config-${n++}.json`)
        copyFileSync(join(dir, 'config.json'), config)
        const r = await runCli(args, {
          env: { ...env, ...(explicitTarget ? {} : { REDIS_URL: redis.url }), BOTMESH_CONFIG: config },
          timeoutMs: 30_000,
        })
        if (r.code === 70 || (r.code === 2 && !l.showsError))
          bad.push(`${l.where}: botmesh-coord ${l.args.join(' ')} → exit ${r.code}: ${r.stderr.trim()}`)
      }
    }
    await Promise.all([worker(), worker(), worker()])
    expect(bad).toEqual([])
  }, 240_000)
})

/**
 * An intervention the docs suggest acts only on what the operator saw: pasted after the state moved
 * on (a frozen leader's lease ran out and a healthy standby leads), it must change nothing. So every
 * documented write is pinned (--if-fence, --if-revision, --if-incarnation) or only looks (--dry-run),
 * or is a bulk clean-up whose items are each conditioned on the revision listed (--owner-dead, --flow).
 */
describe('documented interventions', () => {
  const WRITE =
    /botmesh-coord\b[^`\n]*?\b(chat release|chat skip|provider yield|checkpoint rm|checkpoint extend|handover rm|replica evict|lock release)\b[^`\n]*/g
  const PINNED = /--if-fence|--if-revision|--if-incarnation|--dry-run|--cancel|--owner-dead|--flow\b|--from\b|--help/
  it('are pinned to what the operator saw', () => {
    const unpinned: string[] = []
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8')
      for (const m of text.matchAll(WRITE)) {
        const start = m.index
        const lineStart = text.lastIndexOf('\n', start) + 1
        // Inside inline code (an odd number of backticks before it on its line) the command runs to the closing backtick, across a wrapped line.
        const inline = (text.slice(lineStart, start).match(/`/g)?.length ?? 0) % 2 === 1
        const line = inline ? text.slice(start, text.indexOf('`', start)).replace(/\s+/g, ' ') : m[0]
        // An error line the docs show, a usage line, or prose naming the command without anything to act on.
        if (text.startsWith('botmesh-coord:', lineStart) || text.startsWith('Usage:', lineStart)) continue
        if (new RegExp(`${m[1]}(\\s+(\\[options\\]|<\\w+>|\\[\\w+\\]))*\\s*$`).test(line)) continue
        if (!PINNED.test(line)) unpinned.push(`${page}: ${line.trim()}`)
      }
    }
    expect(unpinned).toEqual([])
  })
})
