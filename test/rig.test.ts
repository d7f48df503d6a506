/**
 * Smoke test for the test rig itself: the shared Redis and Redis Cluster from
 * global setup are reachable, and the launcher (scripts/redis-procs.mjs, also the benchmark's, the
 * fault campaign's and the demo's) starts, restarts and stops servers — or says in one line that
 * redis-server is missing.
 */
import { spawnSync } from 'node:child_process'
import { connect } from 'node:net'
import { Cluster, Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { clusterUrl, freePort, hostPort, redisUrl, startRedis, uniquePrefix, type RedisProc } from './helpers/redis.js'
import { REDIS_SERVER_MISSING } from '../scripts/redis-procs.mjs'

function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

describe('test rig', () => {
  it('uniquePrefix() is letters, digits and dashes', () => {
    const a = uniquePrefix()
    expect(a).toMatch(/^t-[a-z0-9]{8}$/)
    expect(uniquePrefix('lease')).toMatch(/^lease-[a-z0-9]{8}$/)
    expect(uniquePrefix()).not.toBe(a)
  })

  it('shared standalone Redis answers PING', async () => {
    const r = new Redis(redisUrl(), { maxRetriesPerRequest: 1 })
    cleanups.push(() => r.quit())
    expect(await r.ping()).toBe('PONG')
    // never the system Redis on 6379
    expect(hostPort(redisUrl()).port).not.toBe(6379)
  })

  it('shared Redis Cluster is healthy, has three masters and routes keys', async () => {
    const cluster = new Cluster([hostPort(clusterUrl())], { redisOptions: { maxRetriesPerRequest: 1 } })
    cleanups.push(() => cluster.quit())
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', resolve)
      cluster.once('error', reject)
    })

    const info = (await cluster.call('CLUSTER', 'INFO')) as string
    expect(info).toMatch(/cluster_state:ok/)
    expect(cluster.nodes('master').length).toBe(3)

    const p = uniquePrefix()
    // hash tags a, b, c land on slots 15495, 3300, 7365 — one per master
    const keys = 'abcdefgh'.split('').map((tag) => `{${tag}}x:${p}`)
    for (const k of keys) await cluster.set(k, `v-${k}`, 'EX', 60)
    for (const k of keys) expect(await cluster.get(k)).toBe(`v-${k}`)

    const perMaster = await Promise.all(cluster.nodes('master').map((n) => n.keys(`*x:${p}`)))
    expect(perMaster.every((ks) => ks.length > 0)).toBe(true)
    expect(perMaster.flat().sort()).toEqual([...keys].sort())

    for (const k of keys) await cluster.del(k)
  })

  it('startRedis() + stop() on its own port, and restart on the same port', async () => {
    const port = await freePort()
    let proc: RedisProc | undefined = await startRedis({ port })
    cleanups.push(() => proc?.stop())
    expect(proc.port).toBe(port)
    expect(proc.url).toBe(`redis://127.0.0.1:${port}`)

    const c1 = new Redis(proc.url, { maxRetriesPerRequest: 1, lazyConnect: true })
    await c1.connect()
    await c1.set('k', 'v1')
    expect(await c1.get('k')).toBe('v1')
    c1.disconnect()

    const { pid } = proc
    await proc.stop()
    expect(pidGone(pid)).toBe(true)

    // restart on the same port: a fresh, empty server
    proc = await startRedis({ port })
    expect(proc.pid).not.toBe(pid)
    const c2 = new Redis(proc.url, { maxRetriesPerRequest: 1, lazyConnect: true })
    await c2.connect()
    expect(await c2.get('k')).toBeNull()
    c2.disconnect()

    const pid2 = proc.pid
    await proc.stop()
    expect(pidGone(pid2)).toBe(true)
  })

  it('startRedis({ password }) requires AUTH and puts it in the url', async () => {
    const proc = await startRedis({ password: 's3cret' })
    cleanups.push(() => proc.stop())
    expect(proc.url).toBe(`redis://:s3cret@127.0.0.1:${proc.port}`)

    const c = new Redis(proc.url, { maxRetriesPerRequest: 1, lazyConnect: true })
    await c.connect()
    expect(await c.ping()).toBe('PONG')
    c.disconnect()

    // raw socket: ioredis 6 would fail already in its connect-time HELLO
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(proc.port, '127.0.0.1', () => sock.write('PING\r\n'))
      sock.once('data', (d) => {
        resolve(d.toString())
        sock.destroy()
      })
      sock.once('error', reject)
    })
    expect(reply).toMatch(/^-NOAUTH/)
  })

  it('restart() comes back on the same port: empty, or with its data under persist aof', async () => {
    for (const persist of ['none', 'aof'] as const) {
      const proc = await startRedis({ persist })
      cleanups.push(() => proc.stop())
      const c = new Redis(proc.url, { maxRetriesPerRequest: 1, lazyConnect: true })
      cleanups.push(() => c.disconnect())
      await c.connect()
      await c.set('k', 'v')
      const { pid, port } = proc
      await proc.restart()
      expect({ port: proc.port, samePid: proc.pid === pid, gone: pidGone(pid) }).toEqual({ port, samePid: false, gone: true })
      expect(await c.get('k')).toBe(persist === 'aof' ? 'v' : null) // the client reconnects by itself
    }
  })

  it('without redis-server on PATH the benchmark and the fault campaign stop with one line, exit 1', () => {
    const env = { ...process.env, PATH: '/nonexistent' }
    for (const args of [
      ['bench/run.js', '--smoke'],
      ['chaos/run.mjs', '--runs', '1'],
    ]) {
      const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', timeout: 30_000 })
      expect({ code: r.status, stderr: r.stderr.trim() }, args[0]).toEqual({ code: 1, stderr: REDIS_SERVER_MISSING })
    }
  })
})
