// Section 4: the operator side at scale. The state (live chat leases, queued tickets, checkpoints) is
// written directly with pipelined HSET/ZADD in the layout of docs/redis-layout.md, names from the
// library's KeyLayout — 100,000 real acquisitions would take minutes and measure nothing extra. The
// replicas that "hold" those leases are real coordinators (their heartbeat records are theirs).
// Then the built CLI runs as a subprocess, as an operator would run it, and INFO commandstats
// (summed over every master) is read around it. Memory per held chat / queued ticket / idle chat
// is measured separately with real acquisitions.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { parseCommandStats, diffStats, addStats, total, round, sharedNow, median } from '../lib/stats.js'

// Connection set-up and tear-down of a CLI process, not part of the command's own reads.
const HOUSEKEEPING = /^(client\||hello|info|quit|cluster|readonly|ping|select|auth|command)/

const BIN = fileURLToPath(new URL('../../bin/botmesh-coord.js', import.meta.url))
const ROUND_TRIP_HOOK = fileURLToPath(new URL('../lib/round-trip-hook.mjs', import.meta.url))

/** Commands sent to one node, or to each master of a cluster. */
function nodeClients(urls) {
  return urls.map((u) => {
    const c = new Redis(u)
    c.on('error', () => {})
    return c
  })
}

async function commandStats(nodes) {
  let s = {}
  for (const n of nodes) s = addStats(s, parseCommandStats(await n.info('commandstats')))
  return s
}

/** Run the CLI once; n/a when the command does not exist (yet): exit 2 = usage error. */
function runCli(base, args, { timeoutMs = 120_000, onLine, nodeArgs = [], env = {} } = {}) {
  return new Promise((resolve) => {
    const t0 = sharedNow()
    const p = spawn(process.execPath, [...nodeArgs, BIN, ...base, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', ...env },
    })
    let stdout = ''
    let stderr = ''
    let buf = ''
    let firstByteMs = null
    // The child's peak RSS (Linux: VmHWM), polled while it runs.
    let rssKb = 0
    const rssTimer = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'))
        if (m) rssKb = Math.max(rssKb, Number(m[1]))
      } catch {
        /* gone */
      }
    }, 100)
    p.stdout.on('data', (d) => {
      firstByteMs ??= sharedNow() - t0
      const s = d.toString()
      if (stdout.length < 1e6) stdout += s
      if (onLine) {
        buf += s
        let i
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i)
          buf = buf.slice(i + 1)
          onLine(line, p)
        }
      }
    })
    p.stderr.on('data', (d) => (stderr += d.toString()))
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs)
    p.on('close', (code, signal) => {
      clearTimeout(timer)
      clearInterval(rssTimer)
      resolve({
        code,
        signal,
        ms: sharedNow() - t0,
        firstByteMs,
        rssMb: round(rssKb / 1024, 0),
        stdout,
        stderr: stderr.trim().split('\n')[0] ?? '',
      })
    })
  })
}

/**
 * While `during` runs: another client's PING round trips on every node, one at a time (the latency a
 * bot's replica sees), and the SLOWLOG entries of 10 ms or more. Returns its p99 and max, and the
 * slowest command the log holds.
 */
async function otherClient(nodes, during) {
  for (const n of nodes) {
    await n.config('SET', 'slowlog-log-slower-than', '10000')
    await n.slowlog('RESET')
  }
  const probes = nodes.map((n) => {
    const c = n.duplicate()
    c.on('error', () => {})
    return c
  })
  const lat = []
  let running = true
  const loops = probes.map(async (c) => {
    while (running) {
      const t0 = sharedNow()
      await c.ping().catch(() => {})
      lat.push(sharedNow() - t0)
      await sleep(2)
    }
  })
  let result
  try {
    result = await during()
  } finally {
    running = false
    await Promise.all(loops)
    for (const c of probes) c.disconnect()
  }
  let slowest = 0
  let slowCount = 0
  for (const n of nodes) {
    for (const e of await n.slowlog('GET', 128)) {
      slowCount++
      slowest = Math.max(slowest, Number(e[2]))
    }
  }
  lat.sort((a, b) => a - b)
  return {
    result,
    otherClient: { p99Ms: round(lat[Math.floor(lat.length * 0.99)] ?? 0, 2), maxMs: round(lat[lat.length - 1] ?? 0, 1), pings: lat.length },
    slowlog: { entriesOver10ms: slowCount, slowestUs: slowest },
  }
}

/** `args` as a person pipes it into `head -5`: when the first 5 lines came, and when the CLI exited after the pipe closed. */
function measureHead(base, args, lines = 5) {
  return new Promise((resolve) => {
    const t0 = sharedNow()
    const p = spawn(process.execPath, [BIN, ...base.filter((a) => a !== '--json'), ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, NO_COLOR: '1' },
    })
    let seen = 0
    let linesMs = null
    p.stdout.on('data', (d) => {
      seen += d.toString().split('\n').length - 1
      if (seen >= lines && linesMs === null) {
        linesMs = sharedNow() - t0
        p.stdout.destroy()
      }
    })
    const timer = setTimeout(() => p.kill('SIGKILL'), 120_000)
    p.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ firstLinesMs: linesMs === null ? null : round(linesMs, 0), exitMs: round(sharedNow() - t0, 0), code, signal })
    })
  })
}

async function measureCli(nodes, base, args, label, { okCodes = [0] } = {}) {
  let before = null
  let after = null
  const {
    result: r,
    otherClient: other,
    slowlog,
  } = await otherClient(nodes, async () => {
    before = await commandStats(nodes)
    const run = await runCli(base, args)
    after = await commandStats(nodes)
    return run
  })
  // The other client's PINGs are not the CLI's.
  const { ping: _ping, ...cmds } = diffStats(before, after, nodes.length)
  if (r.code === 2) return { command: label, status: 'n/a', note: `not available yet: ${r.stderr}` }
  if (!okCodes.includes(r.code)) return { command: label, status: 'error', note: `exit ${r.code}: ${r.stderr}`, ms: round(r.ms, 0) }
  let items = null
  try {
    const j = JSON.parse(r.stdout)
    items = Array.isArray(j)
      ? j.length
      : Array.isArray(j?.items)
        ? j.items.length
        : Array.isArray(j?.leases)
          ? j.leases.length
          : Array.isArray(j?.chats)
            ? j.chats.length
            : null
  } catch {
    /* a table */
  }
  const dataCommands = total(Object.fromEntries(Object.entries(cmds).filter(([k]) => !HOUSEKEEPING.test(k))))
  return {
    command: label,
    status: 'ok',
    ms: round(r.ms, 0),
    firstByteMs: r.firstByteMs === null ? null : round(r.firstByteMs, 0),
    rssMb: r.rssMb,
    otherClient: other,
    slowlog,
    redisCommands: total(cmds),
    dataCommands,
    byCommand: cmds,
    items,
    stdout: r.stdout.length < 1e6 ? r.stdout : null,
  }
}

/**
 * Round trips of one CLI run after connection set-up, on any layout: counted inside the process by
 * bench/lib/round-trip-hook.mjs. `sequential`: a round trip starts only once a server answered since
 * the last one began (requests to two masters at once count once); `perConnection`: summed per
 * connection, as the relay of scripts/round-trip-relay.mjs counts on one server.
 */
async function countRoundTrips(base, args) {
  const dir = mkdtempSync(join(tmpdir(), 'botmesh-bench-rt-'))
  const file = join(dir, 'round-trips.json')
  try {
    const r = await runCli(base, args, { nodeArgs: ['--import', ROUND_TRIP_HOOK], env: { BOTMESH_ROUND_TRIPS_FILE: file } })
    return r.code === 0 ? JSON.parse(readFileSync(file, 'utf8')) : null
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Dashboard hook: `botmesh-coord watch --jsonl` writes one JSON snapshot per refresh. Measured
 * between the first snapshot and the (refreshes+1)-th: the Redis commands of `refreshes` refreshes.
 * Picked up automatically once the dashboard issue lands; n/a until then.
 */
async function measureWatch(nodes, base, refreshes) {
  let lines = 0
  let before = null
  let after = null
  let pending = Promise.resolve()
  const r = await runCli(base, ['watch', '--jsonl'], {
    timeoutMs: 60_000,
    onLine: (line, p) => {
      if (!line.trim()) return
      lines++
      if (lines === 1)
        pending = pending.then(async () => {
          before = await commandStats(nodes)
        })
      if (lines === refreshes + 1) {
        pending = pending.then(async () => {
          after = await commandStats(nodes)
          p.kill('SIGTERM')
        })
      }
    },
  })
  await pending
  if (!after) {
    if (r.code === 2) return { status: 'n/a', note: `not available yet: ${r.stderr}` }
    return { status: 'error', note: `exit ${r.code ?? r.signal} after ${lines} snapshots: ${r.stderr}` }
  }
  const cmds = diffStats(before, after, nodes.length)
  return { status: 'ok', refreshes, commandsPerRefresh: round(total(cmds) / refreshes, 1), byCommand: cmds }
}

/**
 * `botmesh-coord exporter` on a free port: `scrapes` scrapes of /metrics after a first one (which
 * also finds where the event stream stands), with INFO commandstats around them — the Redis commands
 * of one scrape — and how long a scrape took.
 */
async function measureExporter(nodes, base, scrapes) {
  const p = spawn(process.execPath, [BIN, ...base.filter((a) => a !== '--json'), 'exporter', '--listen', '127.0.0.1:0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  })
  let stderr = ''
  p.stderr.on('data', (d) => (stderr += d.toString()))
  try {
    let url = null
    for (let waited = 0; !url && waited < 30_000 && p.exitCode === null; waited += 50) {
      url = /serving (http:\/\/\S+\/metrics)/.exec(stderr)?.[1] ?? null
      if (!url) await sleep(50)
    }
    if (!url) return { status: p.exitCode === 2 ? 'n/a' : 'error', note: stderr.trim().split('\n')[0] ?? '' }
    const scrape = async () => {
      const t0 = sharedNow()
      const text = await (await fetch(url)).text()
      if (!/^botmesh_redis_up 1$/m.test(text))
        throw new Error(`scrape without Redis: ${text.match(/botmesh_scrape_last_error_info.*/)?.[0]}`)
      return sharedNow() - t0
    }
    await scrape()
    const before = await commandStats(nodes)
    const ms = []
    for (let i = 0; i < scrapes; i++) ms.push(await scrape())
    const after = await commandStats(nodes)
    const cmds = diffStats(before, after, nodes.length)
    ms.sort((a, b) => a - b)
    return {
      status: 'ok',
      scrapes,
      commandsPerScrape: round(total(cmds) / scrapes, 1),
      medianScrapeMs: round(ms[Math.floor(ms.length / 2)], 1),
      byCommand: cmds,
    }
  } finally {
    p.kill('SIGTERM')
  }
}

async function batched(n, size, fn) {
  for (let i = 0; i < n; i += size) {
    const ps = []
    for (let j = i; j < Math.min(n, i + size); j++) ps.push(fn(j))
    await Promise.all(ps)
  }
}

/**
 * Write the state directly. Held chats [from, to) with a live lease by one of `holders`; `ticketsPer`
 * queued tickets on chats [from, from + ticketChats); a checkpoint per chat.
 */
export async function buildState(client, keys, holders, from, to, ticketChats, ticketsPer, leaseLeftMs) {
  const now = Number((await client.time())[0]) * 1000
  await batched(to - from, 2000, async (k) => {
    const i = from + k
    const chat = `chat:${i}`
    const ck = keys.chat(chat)
    const h = holders[i % holders.length]
    const fence = String(1_700_000_000_000_000 + i)
    const ticket = 1
    const fields = [
      'n',
      String(ticket),
      'f',
      fence,
      'h',
      h.replicaId,
      'hi',
      h.incarnation,
      'ht',
      String(ticket),
      'exp',
      String(now + leaseLeftMs),
      'g',
      String(now - 1000),
      'lr',
      String(now - 500),
      'lh',
      h.replicaId,
      'lhi',
      h.incarnation,
      'wt',
      '3',
    ]
    const ops = []
    if (k < ticketChats) {
      const n = ticket + ticketsPer
      fields[1] = String(n)
      for (let t = ticket + 1; t <= n; t++) {
        const w = holders[(i + t) % holders.length]
        fields.push(`t:${t}`, `${now + leaseLeftMs}|${now - 200 * t}|${w.incarnation}|${w.replicaId}`)
        ops.push(client.zadd(ck.queue, t, String(t)))
      }
      ops.push(client.pexpire(ck.queue, leaseLeftMs * 2))
    }
    ops.push(client.hset(ck.state, ...fields), client.pexpire(ck.state, leaseLeftMs * 2))
    ops.push(
      client.hset(
        ck.checkpoint,
        'rev',
        fence,
        'flow',
        'order',
        'step',
        'address',
        'd',
        JSON.stringify({ state: { items: [1, 2, 3], note: 'bench' } }),
        'oi',
        h.replicaId,
        'oinc',
        h.incarnation,
        'of',
        fence,
        'at',
        String(now - 800),
      ),
    )
    await Promise.all(ops)
  })
}

/** MEMORY STATS as an object (its nested arrays too). */
async function memoryStats(c) {
  const obj = (a) => {
    const o = {}
    for (let i = 0; i + 1 < a.length; i += 2) o[a[i]] = Array.isArray(a[i + 1]) ? obj(a[i + 1]) : a[i + 1]
    return o
  }
  return obj(await c.call('MEMORY', 'STATS'))
}

/**
 * The keyspace's bytes: used_memory less what is not data (the clients' query and reply buffers, the
 * script caches, replication and AOF buffers, start-up allocation), i.e. MEMORY STATS dataset.bytes plus
 * the keyspace's hash tables (db.N overhead). Plain used_memory deltas moved by ±25 B per item at 2,000
 * items with the clients' buffers, which Redis resizes in its cron. Read once two reads 250 ms apart
 * agree (the cron has refreshed the clients' figure and ended any rehash of the key tables), at most 3 s.
 */
async function keyspaceBytes(c) {
  const read = async () => {
    const s = await memoryStats(c)
    let db = 0
    for (const [k, v] of Object.entries(s)) if (/^db\.\d+$/.test(k)) for (const x of Object.values(v)) db += Number(x) || 0
    return Number(s['dataset.bytes']) + db
  }
  let last = await read()
  for (let i = 0; i < 12; i++) {
    await sleep(250)
    const now = await read()
    if (Math.abs(now - last) <= 1024) return now
    last = now
  }
  return last
}

/** Σ MEMORY USAGE of the keys matching `pattern` (SCAN, pipelined): deterministic, key by key. */
async function memoryUsageSum(c, pattern) {
  let sum = 0
  let cursor = '0'
  do {
    const [next, keys] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    if (keys.length === 0) continue
    const p = c.pipeline()
    for (const k of keys) p.memory('USAGE', k, 'SAMPLES', '0')
    for (const [err, v] of await p.exec()) if (!err) sum += Number(v)
  } while (cursor !== '0')
  return sum
}

/** One pass: n chats held, then a ticket queued on each, then all released (idle, fence kept). */
async function memoryPass(url, n, RedisCoordinator, admin) {
  await admin.flushall()
  const holder = new RedisCoordinator({ url, prefix: 'bm', leaseMs: 600_000, replicaId: 'mem-holder' })
  // The waiter polls rarely: its tickets stay queued, the push wake-up confirms them on release.
  const waiter = new RedisCoordinator({ url, prefix: 'bm', leaseMs: 600_000, replicaId: 'mem-waiter', minPollMs: 2000, maxPollMs: 5000 })
  await holder.start()
  await waiter.start()
  await holder.acquireTurn('warm').then((t) => t.release())
  await waiter.acquireTurn('warm').then((t) => t.release())
  await admin.del('bm:c:warm', 'bm:q:warm')
  const m0 = await keyspaceBytes(admin)
  const turns = []
  await batched(n, 500, async (i) => {
    turns[i] = await holder.acquireTurn(`chat:${i}`)
  })
  const m1 = await keyspaceBytes(admin)
  const sampleHeld = Number(await admin.memory('USAGE', 'bm:c:chat:1', 'SAMPLES', '0'))
  const sumHeld = await memoryUsageSum(admin, 'bm:[cq]:chat:*')
  const waits = []
  for (let i = 0; i < n; i++) waits.push(waiter.acquireTurn(`chat:${i}`))
  for (;;) {
    if ((await admin.exists(`bm:q:chat:${n - 1}`)) === 1) break
    await sleep(20)
  }
  await sleep(200)
  const m2 = await keyspaceBytes(admin)
  const sampleQueued =
    Number(await admin.memory('USAGE', 'bm:c:chat:1', 'SAMPLES', '0')) + Number(await admin.memory('USAGE', 'bm:q:chat:1', 'SAMPLES', '0'))
  const sumQueued = await memoryUsageSum(admin, 'bm:[cq]:chat:*')
  await batched(n, 500, (i) => turns[i].release())
  const second = await Promise.all(waits)
  await batched(n, 500, (i) => second[i].release())
  const m3 = await keyspaceBytes(admin)
  const sampleIdle = Number(await admin.memory('USAGE', 'bm:c:chat:1', 'SAMPLES', '0'))
  const sumIdle = await memoryUsageSum(admin, 'bm:[cq]:chat:*')
  const idleTtlS = Number(await admin.pttl('bm:c:chat:1')) / 1000
  await holder.stop()
  await waiter.stop()
  await admin.flushall()
  return {
    held: (m1 - m0) / n,
    queued: (m2 - m1) / n,
    idle: (m3 - m0) / n,
    sample: { heldChat: sampleHeld, heldChatWithOneTicket: sampleQueued, idleChat: sampleIdle },
    mean: { heldChat: sumHeld / n, heldChatWithOneTicket: sumQueued / n, idleChat: sumIdle / n },
    idleTtlS,
  }
}

/**
 * Memory per held chat, per queued ticket, per idle chat (fence kept), with real acquisitions: the
 * keyspace's bytes (keyspaceBytes) before and after, the median of `repeats` passes after one pass
 * thrown away (the first pass on a server also grows buffers it keeps, up to 65 B per item at 2,000).
 * memoryUsageMean: Σ MEMORY USAGE of every chat's keys / n (the sample is chat:1 only, whose request
 * ids and name are shorter than most).
 */
export async function measureMemory(url, n, repeats = 3) {
  const { RedisCoordinator } = await import('../../dist/src/index.js')
  const admin = new Redis(url)
  try {
    await memoryPass(url, n, RedisCoordinator, admin)
    const passes = []
    for (let r = 0; r < repeats; r++) passes.push(await memoryPass(url, n, RedisCoordinator, admin))
    const middle = (f) => median(passes.map(f))
    const last = passes[passes.length - 1]
    return {
      chats: n,
      perHeldChatBytes: round(
        middle((p) => p.held),
        0,
      ),
      perQueuedTicketBytes: round(
        middle((p) => p.queued),
        0,
      ),
      perIdleChatBytes: round(
        middle((p) => p.idle),
        0,
      ),
      passes: passes.map((p) => [round(p.held, 0), round(p.queued, 0), round(p.idle, 0)]),
      memoryUsageSample: last.sample,
      memoryUsageMean: {
        heldChat: round(last.mean.heldChat, 0),
        heldChatWithOneTicket: round(last.mean.heldChatWithOneTicket, 0),
        idleChat: round(last.mean.idleChat, 0),
      },
      idleChatTtlHours: round(last.idleTtlS / 3600, 1),
    }
  } finally {
    admin.disconnect()
  }
}

/** Why `--from` refused the file, without the temporary file's path (--json prints an error document). */
function replayError(stderr) {
  let message = stderr.trim()
  try {
    message = JSON.parse(message)?.error?.message ?? message
  } catch {
    /* a plain line */
  }
  return message.replace(/^--from: \S+: /, '')
}

/**
 * `snapshot -o <file>.json.gz` of the whole state: wall time, Redis commands, the file's size, and
 * `--from <file> chat ls` (the replay reads no Redis).
 */
async function measureSnapshot(nodes, base) {
  const dir = mkdtempSync(join(tmpdir(), 'botmesh-bench-snap-'))
  const file = join(dir, 'state.json.gz')
  try {
    const r = await measureCli(nodes, base, ['snapshot', '-o', file], 'snapshot -o state.json.gz')
    if (r.status !== 'ok') return r
    // What the capture says of itself (the file is not parsed here: at a million chats it is 500 MB of JSON).
    const summary = JSON.parse(r.stdout)
    // Its output is not parsed: runCli keeps only the first MB of stdout.
    const replay = await runCli(['--from', file, '--json'], ['chat', 'ls'])
    const { stdout: _out, ...rest } = r
    return {
      ...rest,
      bytes: statSync(file).size,
      keys: summary.keys,
      records: summary.records,
      spanMs: summary.spanMs,
      replayMs: replay.code === 0 ? round(replay.ms, 0) : null,
      replayRssMb: replay.code === 0 ? replay.rssMb : null,
      replayNote: replay.code === 0 ? null : replayError(replay.stderr),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The dashboard and the exporter on states that replicas really hold: `replicas` coordinators each
 * take `turns` turns, and beat once (renewNow) so that their heartbeats name those leases (up to the
 * heartbeat's cap of 100); one refresh and one scrape measured per size. Their leases are long
 * (HELD_LEASE_MS: the next renewal cycle is HELD_LEASE_MS / 3 away), so the replicas send nothing
 * while the readers are measured: INFO commandstats then counts the readers' commands alone.
 */
const HELD_LEASE_MS = 180_000

async function measureHeld(o, nodes, base, RedisCoordinator, prefix, log) {
  const out = []
  for (const replicas of o.heldReplicas) {
    const turns = 100
    const cs = []
    try {
      for (let i = 0; i < replicas; i++) {
        const c = new RedisCoordinator({ url: o.url, prefix, layout: o.layout, leaseMs: HELD_LEASE_MS, replicaId: `held-${i}` })
        c.on('coordination:warning', () => {})
        await c.start()
        cs.push(c)
      }
      await Promise.all(cs.map((c, i) => Promise.all(Array.from({ length: turns }, (_, t) => c.acquireTurn(`held:${i}:${t}`)))))
      // A heartbeat names the leases now held; the next one is a renewal interval away.
      await Promise.all(cs.map((c) => c.renewNow()))
      const started = performance.now()
      const watch = await measureWatch(nodes, base, o.refreshes)
      const exporter = await measureExporter(nodes, base, o.refreshes)
      // Both within one renewal interval: no replica wrote or read meanwhile (else the counts are theirs too).
      const quiet = performance.now() - started < HELD_LEASE_MS / 3
      out.push({ replicas, turns, watch, exporter, replicasQuiet: quiet })
      log(
        `  ${o.layout}: ${replicas} replicas × ${turns} held turns: dashboard ${watch.status === 'ok' ? `${watch.commandsPerRefresh} commands/refresh` : watch.status}, exporter ${exporterLine(exporter)}${quiet ? '' : ' (a renewal cycle fell inside the measurement: counted)'}`,
      )
    } finally {
      for (const c of cs) await c.stop().catch(() => {})
    }
  }
  return out
}

const exporterLine = (e) =>
  e.status === 'ok' ? `${e.commandsPerScrape} commands/scrape, ${e.medianScrapeMs} ms` : `${e.status} (${e.note})`

/** o: { layout, url, nodeUrls, chats, tickets, checkpoints, smallChats, refreshes, heldReplicas } */
export async function runScale(o, log) {
  const { RedisCoordinator, KeyLayout } = await import('../../dist/src/index.js')
  const prefix = 'bs'
  const keys = new KeyLayout(prefix, o.layout)
  const nodes = nodeClients(o.nodeUrls)
  const writer =
    o.layout === 'cluster' ? new Redis.Cluster([o.url], { enableAutoPipelining: true }) : new Redis(o.url, { enableAutoPipelining: true })
  writer.on('error', () => {})
  const replicas = []
  const out = { layout: o.layout, chats: o.chats, tickets: o.tickets, checkpoints: o.chats, cli: [], watch: {} }
  const base = ['--url', o.url, '--prefix', prefix, '--layout', o.layout, '--json']
  try {
    for (let i = 0; i < 4; i++) {
      const c = new RedisCoordinator({ url: o.url, prefix, layout: o.layout, leaseMs: 600_000, replicaId: `scale-replica-${i}` })
      c.on('coordination:warning', () => {})
      await c.start()
      replicas.push(c)
    }
    const holders = replicas.map((c) => ({ replicaId: c.replicaId, incarnation: c.incarnation }))
    const ticketsPer = 5
    const ticketChatsTotal = Math.ceil(o.tickets / ticketsPer)
    const small = Math.min(o.smallChats, o.chats)
    const smallTicketChats = Math.ceil((ticketChatsTotal * small) / o.chats)
    let t0 = sharedNow()
    await buildState(writer, keys, holders, 0, small, smallTicketChats, ticketsPer, 900_000)
    out.watch.small = { chats: small, ...(await measureWatch(nodes, base, o.refreshes)) }
    log(
      `  ${o.layout}: dashboard at ${small} chats: ${out.watch.small.status === 'ok' ? `${out.watch.small.commandsPerRefresh} commands/refresh` : out.watch.small.status}`,
    )
    out.exporter = { small: { chats: small, ...(await measureExporter(nodes, base, o.refreshes)) } }
    log(`  ${o.layout}: exporter at ${small} chats: ${exporterLine(out.exporter.small)}`)
    t0 = sharedNow()
    // The rest, so that ticket chats stay the first ones.
    await buildState(writer, keys, holders, small, o.chats, Math.max(0, ticketChatsTotal - small), ticketsPer, 900_000)
    if (smallTicketChats < ticketChatsTotal && small < ticketChatsTotal) {
      // chats [smallTicketChats, small) got no tickets in the first pass: add them now
      await buildState(
        writer,
        keys,
        holders,
        smallTicketChats,
        Math.min(small, ticketChatsTotal),
        Math.min(small, ticketChatsTotal) - smallTicketChats,
        ticketsPer,
        900_000,
      )
    }
    out.buildSeconds = round((sharedNow() - t0) / 1000, 1)
    let dbsize = 0
    for (const n of nodes) dbsize += await n.dbsize()
    out.keys = dbsize
    log(`  ${o.layout}: state written (${dbsize} keys in ${out.buildSeconds} s)`)
    const version = await runCli([], ['--version'])
    out.nodeStartupMs = round(version.ms, 0)
    for (const [label, args] of [
      ['leases ls --json', ['leases', 'ls']],
      ['chat ls --json', ['chat', 'ls']],
      ['chat inspect chat:7 --json', ['chat', 'inspect', 'chat:7']],
    ]) {
      const { stdout: _stdout, ...r } = await measureCli(nodes, base, args, label)
      if (args[1] === 'inspect' && r.status === 'ok') {
        const rt = await countRoundTrips(base, args)
        r.roundTrips = rt?.sequential ?? null
        r.roundTripsPerConnection = rt?.perConnection ?? null
      }
      out.cli.push(r)
      log(
        `  ${o.layout}: ${label}: ${r.status === 'ok' ? `${r.ms} ms, ${r.redisCommands} Redis commands${r.items !== null ? `, ${r.items} items` : ''}` : `${r.status} (${r.note})`}`,
      )
    }
    // A listing piped into head: the first lines, and the exit once the pipe closed.
    out.head = {}
    for (const [label, args] of [
      ['chat ls | head -5', ['chat', 'ls']],
      ['leases ls --kind chat | head -5', ['leases', 'ls', '--kind', 'chat']],
    ]) {
      out.head[label] = await measureHead(base, args)
      log(`  ${o.layout}: ${label}: first 5 lines at ${out.head[label].firstLinesMs} ms, exited at ${out.head[label].exitMs} ms`)
    }
    out.snapshot = await measureSnapshot(nodes, base)
    log(
      `  ${o.layout}: snapshot of ${o.chats} chats: ${out.snapshot.status === 'ok' ? `${out.snapshot.ms} ms, ${out.snapshot.bytes} bytes gzipped, ${out.snapshot.keys} keys; replayed chat ls ${out.snapshot.replayMs} ms, ${out.snapshot.replayRssMb} MB` : `${out.snapshot.status} (${out.snapshot.note})`}`,
    )
    // doctor reads every chat, lead, lock, marker and checkpoint (exit 1: it found something unsafe).
    const { stdout: _doctorOut, ...doctor } = await measureCli(nodes, base, ['doctor'], 'doctor --json', { okCodes: [0, 1] })
    out.doctor = doctor
    log(
      `  ${o.layout}: doctor at ${o.chats} chats: ${doctor.status === 'ok' ? `${doctor.ms} ms, ${doctor.rssMb} MB` : `${doctor.status} (${doctor.note})`}`,
    )
    out.watch.large = { chats: o.chats, ...(await measureWatch(nodes, base, o.refreshes)) }
    log(
      `  ${o.layout}: dashboard at ${o.chats} chats: ${out.watch.large.status === 'ok' ? `${out.watch.large.commandsPerRefresh} commands/refresh` : out.watch.large.status}`,
    )
    out.exporter.large = { chats: o.chats, ...(await measureExporter(nodes, base, o.refreshes)) }
    log(`  ${o.layout}: exporter at ${o.chats} chats: ${exporterLine(out.exporter.large)}`)
    out.held = await measureHeld(o, nodes, base, RedisCoordinator, prefix, log)
  } finally {
    for (const c of replicas) await c.stop().catch(() => {})
    writer.disconnect()
    for (const n of nodes) {
      await n.flushall().catch(() => {})
      n.disconnect()
    }
  }
  return out
}
