/**
 * Every server gone (the sentinels, the master and its replica, all killed): a coordinator's stop()
 * still ends — a holder's, a waiter's, and one still starting — and the process exits by itself. The
 * give-back is bounded (about 2 × commandTimeoutMs), and no connection keeps reconnecting after it.
 * The bound asserted here is only a hang detector; before, such a stop() never ended.
 */
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSentinels, type SentinelSet } from '../../scripts/redis-procs.mjs'
import { uniquePrefix } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'

let set: SentinelSet
beforeAll(async () => {
  set = await startSentinels()
}, 60_000)
afterAll(async () => {
  await set?.stop()
})

const dist = new URL('../../dist/src/index.js', import.meta.url).href
// The child holds a turn (h), waits for it (w), then, once told every server is gone, starts a third
// coordinator (s) and stops all three at once.
const script = `import { RedisCoordinator } from ${JSON.stringify(dist)}
import { createInterface } from 'node:readline'
const mk = (id) => new RedisCoordinator({ url: process.env.SENTINEL_URL, prefix: process.env.PREFIX, replicaId: id, leaseMs: 3000 })
const holder = mk('h')
await holder.start()
await holder.acquireTurn('chat:1')
const waiter = mk('w')
await waiter.start()
const waiting = waiter.acquireTurn('chat:1', { waitMs: 60000 }).then(() => 'granted', (e) => 'failed: ' + e.message)
console.log('ready')
await new Promise((r) => createInterface({ input: process.stdin }).once('line', r))
const starting = mk('s')
const started = starting.start().then(() => 'started', () => 'did not start')
const stopped = (name, c) => c.stop().then(() => console.log('stopped ' + name))
await Promise.all([stopped('holder', holder), stopped('waiter', waiter), stopped('starting', starting)])
console.log('wait ' + (await waiting) + ', start ' + (await started))
process.stdin.destroy()`

describe('stop() with every server gone', () => {
  it('a holder, a waiter and a coordinator still starting all stop, and the process exits by itself', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, SENTINEL_URL: set.url, PREFIX: uniquePrefix('stopall') },
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr.on('data', (b: Buffer) => (err += b.toString()))
    let code: number | null | undefined
    child.once('exit', (c) => (code = c))
    try {
      await until(() => out.includes('ready') || code !== undefined, 20_000, 'the child to hold and wait')
      expect(out, err).toContain('ready')
      await Promise.all([...set.sentinels, ...set.servers].map((p) => p.kill('SIGKILL')))
      child.stdin.write('go\n')
      // A hang detector, not a timing: each stop() gives up after about 2 s here (commandTimeoutMs 1 s).
      await until(() => code !== undefined, 15_000, `the child to stop its coordinators and exit (so far: ${JSON.stringify(out)})`)
    } finally {
      child.kill('SIGKILL')
    }
    expect(code, err).toBe(0)
    expect(out).toContain('stopped holder')
    expect(out).toContain('stopped waiter')
    expect(out).toContain('stopped starting')
    // The waiter's turn was never granted: its wait ended with the stop (seen while stopping, or —
    // when its poll was in flight to the dead servers, as the push channel's drop asks — once stopped).
    expect(out).toMatch(/wait failed: coordinator is stop(ping|ped)/)
    expect(out).toContain('start did not start')
  })
})
