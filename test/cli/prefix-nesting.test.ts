/**
 * Tenants side by side on one Redis, their prefixes nested (`shop`, `shop:eu`, `shop:cx`, `shop:hot`,
 * `shop:rr`): the commands of `shop` act on its own keys alone — a release, a bulk checkpoint removal,
 * doctor, a snapshot under --max-keys and the exporter's inventory neither touch, list, record nor
 * count a neighbour's. A prefix that would nest on a kind of key (`shop:c`, `shop:cp`) is refused:
 * exit 2, one line saying why and what to use (and no context is saved with it). An earlier release's
 * state under such a prefix fails doctor's nested-prefix check.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCoordinator, RedisStore } from '../../src/index.js'
import { parseJson, runCli } from '../helpers/cli.js'
import { startExporter } from '../helpers/exporter.js'
import { startCoordinator, startRedis, type RedisProc } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

type J = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const DEAD = { replicaId: 'pod-dead', incarnation: 'dead0dead0dead0de' }
const NEIGHBOURS = ['shop:eu', 'shop:cx', 'shop:hot', 'shop:rr']
/** The key names `shop` owns: its kinds' keys and its fixed names. */
const OWN = /^shop:((c|q|cp|ho|l|k|r):|schema$|events$|replicas$)/

describe('prefixes nested on one another', () => {
  let redis: RedisProc
  let dir: string
  const stops: Array<() => Promise<unknown>> = []
  const cli = (prefix: string, ...args: string[]) => runCli(['--url', redis.url, '--prefix', prefix, ...args], { timeoutMs: 30_000 })
  const stores = new Map<string, RedisStore>()
  let shop: RedisCoordinator
  let eu: RedisCoordinator
  const scanAll = async (match: string): Promise<string[]> => {
    const out: string[] = []
    let cursor = '0'
    do {
      const [next, keys] = await stores.get('shop')!.redis.scan(cursor, 'MATCH', match, 'COUNT', 1000)
      cursor = next
      out.push(...keys)
    } while (cursor !== '0')
    return out.sort()
  }
  const countKeys = async (match: string): Promise<number> => (await scanAll(match)).length
  const forward = (store: RedisStore, key: string) =>
    store.setCheckpointIf(
      key,
      { flow: 'order', step: 'pay', state: {}, owner: DEAD, ephemeral: { ttlMs: 600_000, fingerprint: 'v1' } },
      null,
    )

  beforeAll(async () => {
    redis = await startRedis()
    dir = mkdtempSync(join(tmpdir(), 'nest-'))
    for (const p of ['shop', ...NEIGHBOURS]) {
      const s = new RedisStore({ url: redis.url, prefix: p })
      stores.set(p, s)
      stops.push(() => s.close())
    }
    // `shop`: a live turn on a chat whose name looks like a nested prefix's key, two checkpoints of a
    // dead replica.
    shop = await startCoordinator(() => new RedisCoordinator({ url: redis.url, prefix: 'shop', replicaId: 'pod-shop', leaseMs: 30_000 }))
    stops.push(() => shop.stop())
    await shop.acquireTurn('c:chat:1')
    for (const k of ['chat:1', 'chat:2']) await forward(stores.get('shop')!, k)
  }, 60_000)
  afterAll(async () => {
    for (const s of stops.reverse()) await s().catch(() => {})
    await redis?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('doctor reads the same before and after hundreds of neighbour keys appear; a release and --owner-dead removal touch shop alone', async () => {
    const before = parseJson<J>(await cli('shop', 'doctor', '--json'))
    // The neighbours: a live turn on the same chat name, and 100 dead-owned checkpoints each.
    eu = await startCoordinator(() => new RedisCoordinator({ url: redis.url, prefix: 'shop:eu', replicaId: 'pod-eu', leaseMs: 30_000 }))
    stops.push(() => eu.stop())
    const euTurn = await eu.acquireTurn('c:chat:1')
    for (const p of NEIGHBOURS) await Promise.all(Array.from({ length: 100 }, (_, i) => forward(stores.get(p)!, `chat:${i}`)))
    await stores.get('shop:cx')!.redis.hset('shop:cx:c:c:chat:1', 'n', '1', 'f', '1')

    const after = parseJson<J>(await cli('shop', 'doctor', '--json'))
    const corrupt = (d: J) => d.checks.find((c: J) => c.id === 'corrupt')
    expect(corrupt(after)).toEqual(corrupt(before))
    expect(corrupt(after)).toMatchObject({ status: 'ok' })

    const release = await cli('shop', 'chat', 'release', 'c:chat:1', '--yes', '-o', 'json')
    expect(release.code, release.stderr).toBe(0)
    expect(euTurn.signal.aborted).toBe(false)
    expect(await stores.get('shop:eu')!.redis.hget('shop:eu:c:c:chat:1', 'h')).toBe('pod-eu')

    const rm = await cli('shop', 'checkpoints', 'rm', '--flow', 'order', '--owner-dead', '--yes', '-o', 'json')
    expect(rm.code, rm.stderr).toBe(0)
    expect(parseJson<J>(rm).counts).toMatchObject({ listed: 2, removed: 2 })
    for (const p of NEIGHBOURS) expect(await countKeys(`${p}:cp:*`), p).toBe(100)

    // The audit records went to shop's stream only.
    const interventions = async (p: string) =>
      (await stores.get('shop')!.redis.xrange(`${p}:events`, '-', '+'))
        .map(([, f]) => JSON.parse(f[1]!) as J)
        .filter((e) => e.type === 'intervention')
    expect((await interventions('shop')).map((e) => e.command)).toEqual([
      expect.stringMatching(/^chat release c:chat:1 --if-fence \d+$/), // pinned to the fence it showed
      'checkpoints rm --flow order --owner-dead',
    ])
    for (const p of NEIGHBOURS) expect(await interventions(p), p).toEqual([])
  })

  it("a snapshot under --max-keys records shop's keys alone and spends the budget on them only", async () => {
    // What shop owns that a SCAN finds; its schema record and event stream are read by name instead.
    const own = (await scanAll('shop:*')).filter((k) => OWN.test(k) && k !== 'shop:schema' && k !== 'shop:events')
    expect(own.length).toBeGreaterThan(2)
    const file = join(dir, 'shop.json')
    const r = await cli('shop', 'snapshot', '--max-keys', '50', '-o', file)
    expect(r.code, r.stderr).toBe(0)
    const snap = JSON.parse(readFileSync(file, 'utf8')) as J
    const names: string[] = snap.records.nodes.flatMap((n: J) => n.keys ?? [])
    expect(names.filter((k) => !OWN.test(k))).toEqual([])
    expect(Object.keys(snap.records.hashes).filter((k) => !OWN.test(k))).toEqual([])
    expect(snap.capture).toMatchObject({ keys: names.length, partial: null })
    expect([...names].sort()).toEqual(own)
    // Read back from the file: nothing of the neighbours, and no neighbour's key counted as scanned.
    const ls = parseJson<J>(await runCli(['--from', file, 'checkpoints', 'ls', '--json']))
    expect(ls.checkpoints).toEqual([])
    expect(ls.scanned).toBeLessThanOrEqual(own.length)
  })

  it("the exporter's inventory counts shop's checkpoints alone", async () => {
    await forward(stores.get('shop')!, 'chat:3')
    const exporter = await startExporter(['--url', redis.url, '--prefix', 'shop'])
    stops.push(() => exporter.stop())
    await until(async () => (await exporter.sample('botmesh_checkpoints')) !== undefined, 10_000, 'the inventory pass')
    expect(await exporter.sample('botmesh_checkpoints')).toBe(1)
  })

  it('doctor fails on the state an earlier release left under a prefix now refused (shop:c), and says what to do', async () => {
    const r = stores.get('shop')!.redis
    const ok = parseJson<J>(await cli('shop', 'doctor', '--json'))
    expect(ok.checks.find((c: J) => c.id === 'nested-prefix')).toMatchObject({ status: 'ok' })
    // As an earlier release on prefix shop:c wrote them (docs/redis-layout.md): its schema record and a chat.
    await r.hset('shop:c:schema', 'version', '1', 'layout', 'standalone', 'createdAt', '1')
    await r.hset('shop:c:c:chat:1', 'n', '1', 'f', '5')
    try {
      const d = await cli('shop', 'doctor', '--json')
      expect(d.code).toBe(1)
      const check = parseJson<J>(d).checks.find((c: J) => c.id === 'nested-prefix')
      expect(check).toMatchObject({ status: 'fail' })
      expect(check.detail).toMatch(
        /^prefix shop:c \(schema record shop:c:schema\) holds state here, under this prefix's key names .*: commands under shop count, list and can change it as their own$/,
      )
      expect(check.fix).toMatch(
        /^prefix "shop:c" is refused: .* e\.g\. "shop-c" .*; until then, check a key that begins with c: before acting on it$/,
      )
    } finally {
      await r.del('shop:c:schema', 'shop:c:c:chat:1')
    }
  })

  it('a prefix nested on a kind of key is refused by every command: exit 2, one line', async () => {
    const runs = await Promise.all([
      cli('shop:c', 'chat', 'release', 'c:chat:1', '--yes'),
      cli('shop:cp', 'checkpoints', 'rm', '--flow', 'order', '--owner-dead', '--yes'),
      cli('shop:eu:l', 'doctor'),
      runCli(['--url', redis.url, 'snapshot', '-o', join(dir, 'r.json')], { env: { BOTMESH_PREFIX: 'shop:r' } }),
      runCli(['--prefix', 'shop:k', 'config', 'set-context', 'nested'], { env: { BOTMESH_CONFIG: join(dir, 'config.json') } }),
    ])
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
    }
    expect(runs[0]!.stderr.trim()).toMatch(
      /^botmesh-coord: --prefix: prefix "shop:c" is refused: its segment "c" names a kind of key .* so prefix "shop" would read its keys as its own; use a prefix without it, e.g. "shop-c" /,
    )
    expect(runs[2]!.stderr).toMatch(/prefix "shop:eu" would read .* e\.g\. "shop:eu-l"/)
    expect(existsSync(join(dir, 'r.json'))).toBe(false)
    expect(existsSync(join(dir, 'config.json'))).toBe(false) // no context saved with it
  })
})
