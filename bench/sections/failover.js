// Section 3: failover. Real processes: a turn holder or a provider leader is SIGKILLed (right after
// one of its renewals, the worst case: the full lease must run out), or asked to yield; the time to
// the next grant is taken on the machine-wide monotonic clock (kill → the waiter's acquireTurn
// resolves / the standby's onLeader runs) and from Redis's own fields (lease expiry → grant).
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { sharedNow, summarize, round } from '../lib/stats.js'

const CHILD = fileURLToPath(new URL('../workers/failover-child.js', import.meta.url))

function child(args) {
  const p = spawn(process.execPath, [CHILD, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const events = []
  const waiters = []
  createInterface({ input: p.stdout }).on('line', (line) => {
    let e
    try {
      e = JSON.parse(line)
    } catch {
      return
    }
    events.push(e)
    for (const w of [...waiters])
      if (w.match(e)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(e)
      }
  })
  p.on('exit', () => {
    for (const w of waiters) w.reject(new Error(`child ${args[0]} exited`))
  })
  return {
    proc: p,
    next(match, timeoutMs = 30_000) {
      const found = events.find(match)
      if (found) {
        events.splice(events.indexOf(found), 1)
        return Promise.resolve(found)
      }
      return new Promise((resolve, reject) => {
        const w = {
          match: (e) => {
            if (match(e)) {
              events.splice(events.indexOf(e), 1)
              return true
            }
            return false
          },
          resolve,
          reject,
        }
        waiters.push(w)
        setTimeout(() => reject(new Error(`timeout waiting in child ${args[0]}`)), timeoutMs).unref()
      })
    },
    async stop() {
      if (p.exitCode !== null || p.signalCode !== null) return
      p.stdin.write('exit\n')
      await Promise.race([new Promise((r) => p.once('exit', r)), sleep(3000)])
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL')
    },
  }
}

/** Wait until field `lr` (last renewal) of a lease hash changes, then return the hash. */
async function afterRenewal(admin, key, timeoutMs) {
  const first = await admin.hget(key, 'lr')
  const end = Date.now() + timeoutMs
  for (;;) {
    const h = await admin.hgetall(key)
    if (h.lr !== first || Date.now() > end) return h
    await sleep(2)
  }
}

export async function runFailover({ url, leaseMs, trials }, log) {
  const { KeyLayout, CoordinationAdmin } = await import('../../dist/src/index.js')
  const admin = new Redis(url)
  admin.on('error', () => {})
  const result = { leaseMs, trials, holderKill: [], leaderKill: [], yield: [] }
  try {
    for (let i = 0; i < trials; i++) {
      const prefix = `bf-turn-${i}`
      const keys = new KeyLayout(prefix, 'standalone')
      const holder = child(['hold', url, prefix, 'chat:1', String(leaseMs)])
      let waiter = null
      try {
        await holder.next((e) => e.event === 'granted')
        // Only now: a waiter started together with the holder could take the turn first.
        waiter = child(['wait', url, prefix, 'chat:1', String(leaseMs)])
        await waiter.next((e) => e.event === 'acquiring')
        await sleep(100)
        const before = await afterRenewal(admin, keys.chat('chat:1').state, leaseMs)
        const t0 = sharedNow()
        holder.proc.kill('SIGKILL')
        const g = await waiter.next((e) => e.event === 'granted', leaseMs * 3)
        const after = await admin.hgetall(keys.chat('chat:1').state)
        const r = { killToGrantMs: round(g.t - t0, 1), expiryToGrantMs: Number(after.g) - Number(before.exp) }
        result.holderKill.push(r)
        log(`  holder SIGKILL: kill → next grant ${r.killToGrantMs} ms (lease expiry → grant ${r.expiryToGrantMs} ms, Redis clock)`)
      } finally {
        holder.proc.kill('SIGKILL')
        await waiter?.stop()
      }
    }
    for (let i = 0; i < trials; i++) {
      const prefix = `bf-lead-${i}`
      const keys = new KeyLayout(prefix, 'standalone')
      const name = 'provider:bench'
      const a = child(['campaign', url, prefix, name, String(leaseMs)])
      let b = null
      let c = null
      try {
        await a.next((e) => e.event === 'leader')
        b = child(['campaign', url, prefix, name, String(leaseMs)])
        await b.next((e) => e.event === 'started')
        await sleep(200)
        const before = await afterRenewal(admin, keys.lead(name), leaseMs)
        const t0 = sharedNow()
        a.proc.kill('SIGKILL')
        const l = await b.next((e) => e.event === 'leader', leaseMs * 3)
        const h = await admin.hgetall(keys.lead(name))
        const r = {
          killToLeadMs: round(l.t - t0, 1),
          expiryToLeadMs: Number(h.g) - Number(before.exp),
          redisHandoverMs: h.hg === undefined ? null : Number(h.hg),
        }
        result.leaderKill.push(r)
        log(`  leader SIGKILL: kill → standby leads ${r.killToLeadMs} ms (lease expiry → grant ${r.expiryToLeadMs} ms)`)
        // Yield: b leads; c stands by; an operator's request (what `provider yield --wait` sends).
        c = child(['campaign', url, prefix, name, String(leaseMs)])
        await c.next((e) => e.event === 'started')
        await sleep(200)
        const ops = new CoordinationAdmin({ url, prefix })
        const y0 = sharedNow()
        const req = await ops.requestYield(name)
        const y1 = sharedNow()
        const l2 = await c.next((e) => e.event === 'leader', leaseMs * 3)
        const f = await b.next((e) => e.event === 'follower' && e.reason === 'yield', 1000).catch(() => null)
        const h2 = await admin.hgetall(keys.lead(name))
        await ops.close()
        const y = {
          status: req.status,
          requestMs: round(y1 - y0, 2),
          requestToNewLeaderMs: round(l2.t - y0, 1),
          requestToOldLeaderStepsDownMs: f ? round(f.t - y0, 1) : null,
          redisHandoverMs: h2.hg === undefined ? null : Number(h2.hg),
        }
        result.yield.push(y)
        log(
          `  yield: request → new leader ${y.requestToNewLeaderMs} ms (old leader steps down after ${y.requestToOldLeaderStepsDownMs} ms; release → grant ${y.redisHandoverMs} ms in Redis)`,
        )
      } finally {
        a.proc.kill('SIGKILL')
        await Promise.all([b?.stop(), c?.stop()])
      }
    }
  } finally {
    admin.disconnect()
  }
  const sum = (list, f) => {
    const s = summarize(list.map(f).filter((v) => v !== null && !Number.isNaN(v)))
    return { p50: round(s.p50, 1), max: round(s.max, 1) }
  }
  result.summary = {
    holderKillToGrantMs: sum(result.holderKill, (r) => r.killToGrantMs),
    holderExpiryToGrantMs: sum(result.holderKill, (r) => r.expiryToGrantMs),
    leaderKillToLeadMs: sum(result.leaderKill, (r) => r.killToLeadMs),
    leaderExpiryToLeadMs: sum(result.leaderKill, (r) => r.expiryToLeadMs),
    yieldTakeoverMs: sum(result.yield, (r) => r.requestToNewLeaderMs),
  }
  return result
}
