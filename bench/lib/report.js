// The report: the performance targets beside the measured figures, and the Markdown tables.
import { DEFAULTS } from '../../dist/src/index.js'
import { ADAPTER_LABELS } from '../workers/adapters.js'
import { round } from './stats.js'

/**
 * Redis memory per held chat, queued ticket and idle fenced chat of the version the memory target was
 * set on (0eb1bf7: 266 / 269 / 215 by plain used_memory deltas, which moved by tens of bytes from run
 * to run), measured again at 2,000 chats the way measureMemory measures now.
 */
export const MEMORY_BEFORE = { heldChat: 304, queuedTicket: 256, idleChat: 241, chats: 2000 }

/** A replay's peak RSS (', 1337 MB'), or nothing when the run did not measure it. */
const replayMb = (sn) => (sn.replayRssMb == null ? '' : `, ${sn.replayRssMb} MB`)

const f = (v, suffix = '') => (v === null || v === undefined ? 'n/a' : `${v}${suffix}`)
const PATTERN = { uniform: 'uniform', hot10: '10% of chats take 90%', hot1: 'one hot chat' }
/** The exporter's inventory SCAN batches per scrape at most (INVENTORY_STEPS in commands/exporter/command.ts). */
const EXPORTER_INVENTORY_STEPS = 150

/** A figure of a turn row: its median, and with several runs its range over them (min–max). */
const mr = (s, field) => {
  const v = s?.[field]
  if (v === null || v === undefined) return 'n/a'
  const r = s.range?.[field]
  return s.repeats > 1 && r && r[0] !== r[1] ? `${v} (${r[0]}–${r[1]})` : `${v}`
}

const find = (turns, pattern, workMs, adapter) => turns?.find((s) => s.pattern === pattern && s.workMs === workMs && s.adapter === adapter)
const bestPeer = (turns, pattern, workMs) =>
  (turns ?? [])
    .filter((s) => s.pattern === pattern && s.workMs === workMs && s.adapter !== 'botmesh')
    .sort((a, b) => b.msgPerS - a.msgPerS)[0]

/** Which adapters the overload rate was past the capacity of (their sweep's knee below it), said under its table. */
function pastCapacity(ol) {
  const rate = ol.config.overload.rate
  const under = ol.adapters.filter((a) => ol.knees[a] !== null && ol.knees[a] >= rate)
  if (!under.length) return ''
  const names = under.map((a) => ADAPTER_LABELS[a]).join(', ')
  return under.length === ol.adapters.length
    ? ` In this run every adapter's sweep kept up at ${rate} msg/s: the overload was not past any adapter's capacity here (\`--openloop-overload R:S\` offers more).`
    : ` In this run ${names} kept up at ${rate} msg/s in the sweep: the overload was not past ${under.length > 1 ? 'their' : 'its'} capacity.`
}

/** Each target with the measured figure: met / missed / n/a, and by how much. */
export function evaluateTargets(r, cfg) {
  const out = []
  const add = (area, target, measured, met, by = null) =>
    out.push({ area, target, measured, status: met === null ? 'n/a' : met ? 'met' : 'missed', by })
  const turns = r.turns
  for (const w of cfg.work) {
    const b = find(turns, 'uniform', w, 'botmesh')
    const p = bestPeer(turns, 'uniform', w)
    if (b) {
      add(
        'uncontended',
        `≤ 2 round trips per turn + amortised renewal (uniform, W=${w})`,
        `${mr(b, 'roundTripsPerMsg')} round trips/msg`,
        b.roundTripsPerMsg <= 2.1,
        b.roundTripsPerMsg > 2.1 ? `+${(b.roundTripsPerMsg - 2).toFixed(2)}` : null,
      )
      if (p)
        add(
          'uncontended',
          `throughput ≥ best peer (uniform, W=${w})`,
          `${mr(b, 'msgPerS')} vs ${mr(p, 'msgPerS')} msg/s (${p.adapter})`,
          b.msgPerS >= p.msgPerS,
          b.msgPerS < p.msgPerS ? `${(100 * (1 - b.msgPerS / p.msgPerS)).toFixed(0)}% slower` : null,
        )
    }
  }
  // Where the coordination itself is the cost (W=0): throughput and CPU per message beside the best peer.
  for (const pattern of ['hot10', 'hot1']) {
    const b = find(turns, pattern, 0, 'botmesh')
    const p = bestPeer(turns, pattern, 0)
    if (b && p)
      add(
        `${PATTERN[pattern]}, W=0`,
        'throughput ≥ best peer',
        `${mr(b, 'msgPerS')} vs ${mr(p, 'msgPerS')} msg/s (${p.adapter})`,
        b.msgPerS >= p.msgPerS,
        b.msgPerS < p.msgPerS ? `${(100 * (1 - b.msgPerS / p.msgPerS)).toFixed(0)}% slower` : null,
      )
  }
  for (const pattern of ['uniform', 'hot10', 'hot1']) {
    const b = find(turns, pattern, 0, 'botmesh')
    const p = bestPeer(turns, pattern, 0)
    if (!b || !p) continue
    for (const [what, field] of [
      ['Redis CPU µs/msg', 'redisCpuUsPerMsg'],
      ['replica CPU µs/msg', 'nodeCpuUsPerMsg'],
    ])
      add(
        `${PATTERN[pattern]}, W=0`,
        `${what} ≤ best peer's`,
        `${mr(b, field)} vs ${mr(p, field)} (${p.adapter})`,
        b[field] <= p[field],
        b[field] > p[field] ? `${(b[field] / p[field]).toFixed(2)}×` : null,
      )
  }
  const h = find(turns, 'hot1', 2, 'botmesh')
  const hp = bestPeer(turns, 'hot1', 2)
  if (h) {
    if (h.holdBoundPct !== undefined)
      add(
        'one hot chat, W=2',
        '≥ 90% of 1/W',
        `${mr(h, 'holdBoundPct')}% of 1/hold`,
        h.holdBoundPct >= 90,
        h.holdBoundPct < 90 ? `${h.holdBoundPct}%` : null,
      )
    if (hp)
      add(
        'one hot chat, W=2',
        'throughput ≥ best peer',
        `${mr(h, 'msgPerS')} vs ${mr(hp, 'msgPerS')} msg/s (${hp.adapter}); ${h.holdBoundPct}% of 1/hold`,
        h.msgPerS >= hp.msgPerS,
        h.msgPerS < hp.msgPerS ? `${(100 * (1 - h.msgPerS / hp.msgPerS)).toFixed(0)}% slower` : null,
      )
    add(
      'one hot chat, W=2',
      '≤ 3 round trips per message',
      `${h.roundTripsPerMsg} (peers ${turns
        .filter((s) => s.pattern === 'hot1' && s.workMs === 2 && s.adapter !== 'botmesh')
        .map((s) => s.roundTripsPerMsg)
        .join(' / ')})`,
      h.roundTripsPerMsg <= 3,
      h.roundTripsPerMsg > 3 ? `+${(h.roundTripsPerMsg - 3).toFixed(1)}` : null,
    )
    const bound = cfg.replicas * cfg.inflight * (h.holdMs.mean + (h.handoffGapMs.mean ?? 0))
    add(
      'one hot chat, W=2',
      `longest wait ≈ queue length × hold time (${cfg.replicas * cfg.inflight} × (hold + gap) = ${bound.toFixed(0)} ms)`,
      `${h.acquireMs.max} ms (peers ${turns
        .filter((s) => s.pattern === 'hot1' && s.workMs === 2 && s.adapter !== 'botmesh')
        .map((s) => s.acquireMs.max)
        .join(' / ')} ms)`,
      h.acquireMs.max <= bound * 1.5,
      h.acquireMs.max > bound * 1.5 ? `${(h.acquireMs.max / bound).toFixed(1)}×` : null,
    )
    add(
      'one hot chat, W=2',
      'handoff gap p50 < 1 ms',
      `${h.handoffGapMs.p50} ms (p99 ${h.handoffGapMs.p99})`,
      h.handoffGapMs.p50 !== null ? h.handoffGapMs.p50 < 1 : null,
      h.handoffGapMs.p50 >= 1 ? `+${(h.handoffGapMs.p50 - 1).toFixed(2)} ms` : null,
    )
  }
  if (turns) {
    const b = turns.filter((s) => s.adapter === 'botmesh')
    const ov = b.reduce((n, s) => n + s.overlaps, 0)
    const oo = b.reduce((n, s) => n + s.outOfOrder, 0)
    const peers = turns.filter((s) => s.adapter !== 'botmesh')
    add(
      'correctness',
      'zero overlapping holders (botmesh-coord, every scenario)',
      `${ov} (peers: ${peers.reduce((n, s) => n + s.overlaps, 0)})`,
      ov === 0,
    )
    add(
      'correctness',
      'zero order violations (botmesh-coord, every scenario)',
      `${oo} (peers: ${peers.reduce((n, s) => n + s.outOfOrder, 0)} messages, ${peers.reduce((n, s) => n + s.invertedPairs, 0)} inverted pairs)`,
      oo === 0,
    )
  }
  if (r.openloop) openLoopTargets(r.openloop, add)
  for (const sc of r.scale ?? []) {
    const cli = (name) => sc.cli.find((c) => c.command.startsWith(name))
    const ins = cli('chat inspect')
    // Round trips after connection set-up, counted inside the CLI process (bench/lib/round-trip-hook.mjs).
    const rt = ins?.roundTrips
    add(
      `operator (${sc.layout})`,
      'chat inspect ≤ 2 round trips after connection set-up',
      ins?.status === 'ok'
        ? `${typeof rt === 'number' ? `${rt} round trips${ins.roundTripsPerConnection !== rt ? ` (${ins.roundTripsPerConnection} summed over the masters' connections)` : ''}; ` : ''}${ins.dataCommands} commands besides connection set-up (${ins.redisCommands} in all), ${ins.ms} ms`
        : `${ins?.status}: ${ins?.note ?? ''}`,
      ins?.status === 'ok' && typeof rt === 'number' ? rt <= 2 : null,
      ins?.status === 'ok' && typeof rt === 'number' && rt > 2 ? `${rt} round trips` : null,
    )
    for (const name of ['leases ls', 'chat ls']) {
      const ls = cli(name)
      if (!ls) continue
      // 1.5 s at 100,000 leases (the size the target was set at), in proportion at other sizes.
      const budget = Math.max(1500, (1500 * sc.chats) / 100_000)
      add(
        `operator (${sc.layout})`,
        `${name} --json of ${sc.chats} leases ≤ ${round(budget / 1000, 1)} s (1.5 s per 100,000; Node start included)`,
        ls.status === 'ok'
          ? `${ls.ms} ms, ${round((ls.ms * 1000) / sc.chats, 1)} µs per lease, ${ls.rssMb} MB (${ls.redisCommands} commands; node start ${sc.nodeStartupMs} ms)`
          : `${ls.status}: ${ls.note ?? ''}`,
        ls.status === 'ok' ? ls.ms <= budget : null,
        ls.status === 'ok' && ls.ms > budget ? `+${round(ls.ms - budget, 0)} ms` : null,
      )
    }
    for (const [label, h] of Object.entries(sc.head ?? {})) {
      add(
        `operator (${sc.layout})`,
        `${label} at ${sc.chats} chats: first lines within 1 s, exits within 1 s after`,
        h.firstLinesMs === null
          ? `no 5 lines (exit ${h.code ?? h.signal} at ${h.exitMs} ms)`
          : `${h.firstLinesMs} ms, exited at ${h.exitMs} ms`,
        h.firstLinesMs !== null && h.firstLinesMs <= 1000 && h.exitMs - h.firstLinesMs <= 1000,
      )
    }
    const measured = [...sc.cli, sc.snapshot, sc.doctor].filter((c) => c?.status === 'ok' && c.slowlog)
    if (measured.length) {
      const slowest = Math.max(...measured.map((c) => c.slowlog.slowestUs))
      const entries = measured.reduce((n, c) => n + c.slowlog.entriesOver10ms, 0)
      add(
        `operator (${sc.layout})`,
        `no Redis command of a listing, chat inspect, snapshot${sc.doctor ? ' or doctor' : ''} takes 10 ms (SLOWLOG) at ${sc.chats} chats`,
        entries ? `${entries} entries, slowest ${round(slowest / 1000, 1)} ms` : 'none',
        entries === 0,
      )
      const p99 = Math.max(...measured.map((c) => c.otherClient.p99Ms))
      add(
        `operator (${sc.layout})`,
        "another client's p99 under 5 ms during any of them",
        `${p99} ms (worst command's p99; max ${Math.max(...measured.map((c) => c.otherClient.maxMs))} ms)`,
        p99 < 5,
      )
    }
    for (const c of sc.cli.filter((x) => x.status === 'ok' && x.items)) {
      const perRow = (c.ms * 1000) / c.items
      add(
        `operator (${sc.layout})`,
        `${c.command}: ≤ 30 µs per row and ≤ 300 MB client memory`,
        `${round(perRow, 1)} µs per row (${c.items} rows in ${c.ms} ms), ${c.rssMb} MB`,
        perRow <= 30 && c.rssMb <= 300,
      )
    }
    // A million chats is 2,020,000 keys here (state, checkpoint, a queue for one chat in ten).
    const atPace = (label, c, keys, note) => {
      const budget = (30_000 * keys) / 2_020_000
      add(
        `operator (${sc.layout})`,
        `${label} at the pace of 30 s per million chats (${round(budget / 1000, 1)} s for ${keys} keys), ≤ 500 MB`,
        `${c.ms} ms, ${c.rssMb} MB${note}`,
        c.ms <= budget && c.rssMb <= 500,
      )
    }
    const sn = sc.snapshot
    if (sn?.status === 'ok')
      atPace(
        'snapshot',
        sn,
        sn.keys,
        sn.replayMs === null ? `; --from refused: ${sn.replayNote}` : `; replay ${sn.replayMs} ms${replayMb(sn)}`,
      )
    if (sc.doctor?.status === 'ok') atPace('doctor', sc.doctor, sc.keys, '')
    const ws = sc.watch.small
    const wl = sc.watch.large
    add(
      `operator (${sc.layout})`,
      `dashboard commands/refresh flat, ${ws.chats} → ${wl.chats} chats`,
      ws.status === 'ok' && wl.status === 'ok' ? `${ws.commandsPerRefresh} → ${wl.commandsPerRefresh}` : `${wl.status}: ${wl.note ?? ''}`,
      ws.status === 'ok' && wl.status === 'ok' ? wl.commandsPerRefresh <= ws.commandsPerRefresh * 1.2 + 2 : null,
    )
    const es = sc.exporter?.small
    const el = sc.exporter?.large
    if (es && el) {
      add(
        `operator (${sc.layout})`,
        // Bounded, not flat: besides its fixed read, a scrape walks up to EXPORTER_INVENTORY_STEPS
        // inventory SCAN batches (within 150 ms), so that a pass over a million keys takes minutes of scrapes.
        `exporter commands/scrape bounded (its fixed read + at most ${EXPORTER_INVENTORY_STEPS} inventory SCAN batches), ${es.chats} → ${el.chats} chats`,
        es.status === 'ok' && el.status === 'ok'
          ? `${es.commandsPerScrape} → ${el.commandsPerScrape} (${es.medianScrapeMs} → ${el.medianScrapeMs} ms)`
          : `${el.status}: ${el.note ?? ''}`,
        es.status === 'ok' && el.status === 'ok' ? el.commandsPerScrape <= es.commandsPerScrape * 1.2 + 2 + EXPORTER_INVENTORY_STEPS : null,
      )
    }
    heldTargets(sc, add)
  }
  if (r.memory) {
    // No higher than the version the target was set on, measured the same way at the same count.
    const x = r.memory
    const was = MEMORY_BEFORE
    const over = [
      ['held chat', x.perHeldChatBytes, was.heldChat],
      ['queued ticket', x.perQueuedTicketBytes, was.queuedTicket],
      ['idle fenced chat', x.perIdleChatBytes, was.idleChat],
    ].filter(([, v, w]) => v > w)
    add(
      'memory',
      `Redis bytes per held chat / queued ticket / idle fenced chat ≤ ${was.heldChat} / ${was.queuedTicket} / ${was.idleChat} (the version the target was set on, measured the same way)`,
      `${x.perHeldChatBytes} / ${x.perQueuedTicketBytes} / ${x.perIdleChatBytes} bytes (${x.chats} chats, keyspace bytes, median of ${x.passes?.length ?? 1} passes)`,
      // Per-chat bytes grow with the count (key tables, longer ids): judged at the baseline's count only.
      x.chats === was.chats ? over.length === 0 : null,
      x.chats === was.chats && over.length ? over.map(([what, v, w]) => `${what} +${v - w} B`).join(', ') : null,
    )
  }
  if (r.renewalLoaded?.length) {
    const rows = r.renewalLoaded
    const late = rows.filter((x) => x.lost > 0 || x.cycleMaxMs > x.intervalMs)
    add(
      'renewal',
      `a replica holding up to ${rows[rows.length - 1].leases} leases renews every one on time with ${rows[0].busyLoops} busy loops beside it (every cycle within its interval, none lost)`,
      rows.map((x) => `${x.leases}: ${x.cycles} cycles, max ${x.cycleMaxMs} ms of ${x.intervalMs}, ${x.lost} lost`).join('; '),
      late.length === 0,
      late.length ? late.map((x) => `${x.leases}: max ${x.cycleMaxMs} ms, ${x.lost} lost`).join('; ') : null,
    )
  }
  if (r.renewal?.length >= 2) {
    const rows = r.renewal
    const first = rows[0]
    const last = rows[rows.length - 1]
    // Linear: the Redis commands per held lease stay the same (within 10%), and the writes per cycle
    // grow only by one per chunk of 500 (one script renews a chunk).
    const perLease = (x) => (x.redisCommands - first.redisCommands) / Math.max(1, x.leases - first.leases)
    const linear = rows.slice(1).every((x) => Math.abs(perLease(x) - perLease(last)) <= 0.1 * perLease(last))
    // Chunks of 500 leases, one round trip each (the heartbeat goes with the first).
    const batched = rows.every((x) => x.writes <= Math.ceil(x.leases / 500) + first.writes - 1)
    add(
      'renewal',
      `a replica holding ${first.leases} → ${last.leases} leases renews them in batches of 500, at a cost growing linearly`,
      rows
        .map((x) => `${x.leases}: ${x.commandsSent} commands in ${x.writes} writes, ${x.redisCommands} Redis commands, ${x.wallMs} ms`)
        .join('; '),
      linear && batched,
      !batched ? `${last.writes} writes per cycle` : !linear ? 'not linear' : null,
    )
  }
  if (r.failover) {
    const s = r.failover.summary
    const L = r.failover.leaseMs
    add(
      'failover',
      `SIGKILLed holder → next grant ≤ leaseMs + 150 ms (leaseMs ${L})`,
      `max ${s.holderKillToGrantMs.max} ms (lease expiry → grant ≤ ${s.holderExpiryToGrantMs.max} ms)`,
      s.holderKillToGrantMs.max <= L + 150,
      s.holderKillToGrantMs.max > L + 150 ? `+${(s.holderKillToGrantMs.max - L - 150).toFixed(0)} ms` : null,
    )
    add(
      'failover',
      `SIGKILLed provider leader → standby leads ≤ leaseMs + 150 ms`,
      `max ${s.leaderKillToLeadMs.max} ms (lease expiry → grant ≤ ${s.leaderExpiryToLeadMs.max} ms)`,
      s.leaderKillToLeadMs.max <= L + 150,
      s.leaderKillToLeadMs.max > L + 150 ? `+${(s.leaderKillToLeadMs.max - L - 150).toFixed(0)} ms` : null,
    )
    add(
      'failover',
      'yield (requestYield, what `provider yield --wait` sends) → takeover < 200 ms',
      `max ${s.yieldTakeoverMs.max} ms`,
      s.yieldTakeoverMs.max < 200,
    )
  }
  const st = r.startup?.cases
  if (st) {
    const c = (id) => st.find((x) => x.id === id)
    const v = c('version')
    const ls = c('leases')
    if (v)
      add(
        'start-up',
        '`--version` ≤ 2.5 × a bare `node -e 0`',
        `${v.ratio}× (${v.medianMs} ms vs ${c('node').medianMs} ms)`,
        v.ratio <= 2.5,
        v.ratio > 2.5 ? `+${round2(v.ratio - 2.5)}×` : null,
      )
    if (ls)
      add(
        'start-up',
        '`leases ls` on a small state ≤ 3.5 × a bare `node -e 0`',
        `${ls.ratio}× (${ls.medianMs} ms)`,
        ls.ratio <= 3.5,
        ls.ratio > 3.5 ? `+${round2(ls.ratio - 3.5)}×` : null,
      )
  }
  return out
}

const round2 = (v) => Math.round(v * 100) / 100

/**
 * The dashboard and the exporter on held states (replicas' heartbeats naming their leases; measured
 * with the replicas quiet): the dashboard reads at most DEFAULTS.dashboardChatsReadFactor × its top
 * chats, so a refresh is flat from the fewest held to the most; the exporter as many times its
 * --max-chats (DEFAULTS.exporterChats by default) per scrape, so past that cap a scrape costs what
 * it did at the cap — at most the smaller size's cost per chat read times the cap (10% margin), not
 * per lease held.
 */
function heldTargets(sc, add) {
  // A size whose measurement a renewal cycle of the replicas fell inside counts their reads too: not compared.
  const held = (sc.held ?? []).filter((h) => h.watch.status === 'ok' && h.exporter.status === 'ok' && h.replicasQuiet !== false)
  if (held.length < 2) return
  const few = held[0]
  const most = held.at(-1)
  const n = (h) => h.replicas * h.turns
  add(
    `operator (${sc.layout})`,
    `dashboard commands/refresh on held states flat, ${n(few)} → ${n(most)} held turns (heartbeats naming them)`,
    `${few.watch.commandsPerRefresh} → ${most.watch.commandsPerRefresh}`,
    most.watch.commandsPerRefresh <= few.watch.commandsPerRefresh * 1.2,
  )
  // The exporter runs with its default --max-chats: it reads at most this many chats per scrape.
  const cap = DEFAULTS.dashboardChatsReadFactor * DEFAULTS.exporterChats
  const below = held.filter((h) => n(h) <= cap).at(-1)
  if (!below || n(most) <= cap) return
  const bound = (below.exporter.commandsPerScrape / n(below)) * cap * 1.1
  add(
    `operator (${sc.layout})`,
    `exporter commands/scrape on held states bounded by its read cap (${DEFAULTS.dashboardChatsReadFactor} × --max-chats = ${cap} chats): at ${n(most)} held ≤ ${Math.round(bound)} (${n(below)} held: ${below.exporter.commandsPerScrape})`,
    `${most.exporter.commandsPerScrape} (${most.exporter.medianScrapeMs} ms)`,
    most.exporter.commandsPerScrape <= bound,
  )
}

/** The open-loop targets: botmesh-coord beside the best peer of the same run. */
function openLoopTargets(ol, add) {
  const rows = ol.rows
  const of = (scenario) => rows.filter((x) => x.scenario === scenario)
  const b = (list) => list.find((x) => x.adapter === 'botmesh')
  const peers = (list) => list.filter((x) => x.adapter !== 'botmesh')
  const ratio = (a, p) => (a === null || p === null || p === undefined || !p ? null : round2(a / p))
  const ov = of('overload')
  const bo = b(ov)
  if (bo && peers(ov).length) {
    const best = [...peers(ov)].sort((x, y) => y.achievedOverload - x.achievedOverload)[0]
    const k = ratio(bo.achievedOverload, best.achievedOverload)
    add(
      'open loop, overload',
      `achieved during the overload (${ol.config.overload.rate} msg/s offered for ${ol.config.overload.seconds} s) ≥ 0.9× best peer's`,
      `${bo.achievedOverload} vs ${best.achievedOverload} msg/s (${best.adapter}): ${k}×`,
      k !== null ? k >= 0.9 : null,
      k !== null && k < 0.9 ? `${k}×` : null,
    )
    const low = [...peers(ov)].sort((x, y) => x.waitMs.p99 - y.waitMs.p99)[0]
    const k2 = ratio(bo.waitMs.p99, low.waitMs.p99)
    add(
      'open loop, overload',
      "turn-wait p99 over the whole run (overload and recovery) ≤ 2× best peer's",
      `${bo.waitMs.p99} vs ${low.waitMs.p99} ms (${low.adapter}): ${k2}×`,
      k2 !== null ? k2 <= 2 : null,
      k2 !== null && k2 > 2 ? `${k2}×` : null,
    )
  }
  // Under backlog (the overload run) against none (the sweep's lowest rate), per completed message.
  const sweep = of('sweep')
  const lowest = Math.min(...sweep.map((x) => x.offered))
  for (const [what, field] of [
    ['Redis calls/msg (incl. in Lua)', 'redisCallsPerMsg'],
    ['client commands/msg', 'clientCmdsPerMsg'],
  ]) {
    const pairs = ol.adapters
      .map((a) => [a, sweep.find((x) => x.adapter === a && x.offered === lowest), ov.find((x) => x.adapter === a)])
      .filter(([, n, w]) => n && w)
    const mine = pairs.find(([a]) => a === 'botmesh')
    if (!mine) continue
    const k = ratio(mine[2][field], mine[1][field])
    add(
      'open loop, backlog',
      `${what} under backlog ≤ 1.5× without (overload run vs ${lowest} msg/s)`,
      `${mine[1][field]} → ${mine[2][field]} (${k}×; peers ${pairs
        .filter(([a]) => a !== 'botmesh')
        .map(([a, n, w]) => `${a} ${n[field]} → ${w[field]}`)
        .join(', ')})`,
      k !== null ? k <= 1.5 : null,
      k !== null && k > 1.5 ? `${k}×` : null,
    )
  }
  const ct = of('contention')
  const bc = b(ct)
  if (bc && peers(ct).length) {
    const low = [...peers(ct)].sort((x, y) => x.waitMs.p99 - y.waitMs.p99)[0]
    const k = ratio(bc.waitMs.p99, low.waitMs.p99)
    add(
      'open loop, CPU contention',
      `turn-wait p99 at ${ol.config.contention.rate} msg/s with ${ol.config.contention.busyLoops} busy loops ≤ 1.5× best peer's`,
      `${bc.waitMs.p99} vs ${low.waitMs.p99} ms (${low.adapter}): ${k}×`,
      k !== null ? k <= 1.5 : null,
      k !== null && k > 1.5 ? `${k}×` : null,
    )
  }
  const mine = rows.filter((x) => x.adapter === 'botmesh')
  if (mine.length) {
    const others = rows.filter((x) => x.adapter !== 'botmesh')
    const sum = (list, f) => list.reduce((n, x) => n + x[f], 0)
    add(
      'correctness',
      'open loop: zero overlapping holders and zero order violations (botmesh-coord, every run)',
      `${sum(mine, 'overlaps')} overlaps, ${sum(mine, 'outOfOrder')} out of order (peers: ${sum(others, 'overlaps')} overlaps, ${sum(others, 'outOfOrder')} messages out of order)`,
      sum(mine, 'overlaps') === 0 && sum(mine, 'outOfOrder') === 0,
    )
  }
}

const SCENARIO_LABEL = { sweep: 'steady', reference: 'steady (reference)', contention: 'steady + busy loops' }

/** The open-loop tables and the chart's link. */
function openLoopMarkdown(ol, L) {
  const c = ol.config
  L.push(
    `### Open loop: Poisson arrivals, bursts of ${c.burst} messages ${c.burstGapMs} ms apart to one random replica of ${c.replicas} and chat of ${c.chats}; handler time lognormal (median ${c.handlerMedianMs} ms, sigma ${c.handlerSigma}); no in-flight window`,
    '',
    `Each message is handled at its arrival time whatever is in flight; the turn wait runs from its scheduled arrival to the grant, so a replica's late timer counts in it. One run per scenario and adapter, on the same seeded schedule, the adapters interleaved. Past ${c.cap} outstanding messages in one replica a message is dropped by the harness (its own column, not an error); a run drains for up to ${c.drainS} s after its last arrival, and what is still unreleased then is counted as unfinished, its wait so far in the percentiles. Achieved: messages completed within the arrival window per second of it, and all completed over the time to the last completion. Redis calls come from INFO commandstats (incl. in Lua), client commands from the replicas' command counter; both, and the CPU figures, per completed message. The replica timer lag is how late the harness's arrival timers fired in the replica processes (their event loops also run the adapter): a saturated replica shows here.`,
    '',
    '![Open loop: turn-wait p99 and achieved rate against the offered rate, one line per adapter](openloop.svg)',
    '',
  )
  const head =
    '| scenario | offered msg/s | adapter | achieved msg/s (in window / overall) | turn wait p50 / p99 / p99.9 / max ms | errors | harness drops | unfinished | Redis calls/msg | client cmds/msg | Redis CPU µs/msg | client CPU µs/msg | overlaps | out of order (inverted pairs) | replica timer lag p99 ms |'
  const line = (x) =>
    `| ${SCENARIO_LABEL[x.scenario] ?? x.scenario}${x.busyLoops ? ` (${x.busyLoops})` : ''} | ${x.offered} | ${ADAPTER_LABELS[x.adapter]} | ${f(x.achievedInWindow)} / ${f(x.achievedOverall)} | ${f(x.waitMs.p50)} / ${f(x.waitMs.p99)} / ${f(x.waitMs.p999)} / ${f(x.waitMs.max)} | ${x.errors} | ${x.harnessDrops} | ${x.unfinished} | ${f(x.redisCallsPerMsg)} | ${f(x.clientCmdsPerMsg)} | ${f(x.redisCpuUsPerMsg)} | ${f(x.clientCpuUsPerMsg)} | ${x.overlaps} | ${x.outOfOrder} (${x.invertedPairs}) | ${f(x.harnessLagMs?.p99)} |`
  const sep = '| --- | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |'
  const steady = ol.rows.filter((x) => x.scenario === 'sweep' || x.scenario === 'reference').sort((a, b) => a.offered - b.offered)
  L.push(`#### Steady sweep (${c.seconds} s of arrivals per run)`, '', head, sep, ...steady.map(line), '')
  L.push(
    `Knee of the sweep (the highest offered rate whose every message completed, at an overall achieved rate ≥ 95% of the rate its schedule offered): ${ol.adapters
      .map((a) => `${ADAPTER_LABELS[a]} ${ol.knees[a] ?? `below ${Math.min(...c.rates)}`} msg/s`)
      .join('; ')}.`,
    '',
  )
  const ov = ol.rows.filter((x) => x.scenario === 'overload')
  if (ov.length) {
    L.push(
      `#### Overload: ${c.overload.rate} msg/s for ${c.overload.seconds} s, then ${c.recover.rate} msg/s for ${c.recover.seconds} s${c.overload.auto ? (c.overload.auto.knee === null ? ' (the SET NX lock kept up at no swept rate: the fixed rate)' : ` (twice the SET NX lock's knee in the sweep, ${c.overload.auto.knee} msg/s)`) : ''}`,
      '',
      `Backlog: messages that arrived during the overload and had no turn yet at its end. Drain: grants per second from the overload's end until the last of them is granted (while a backlog remains). Recovery: from the overload's end to the first ${c.windowMs} ms window of arrivals whose turn-wait p99 is within 2× the steady p99 at ${c.recover.rate} msg/s (that adapter's steady run).${pastCapacity(ol)}`,
      '',
      '| adapter | achieved msg/s during overload / recovery / overall | backlog at overload end | drain msg/s (for s) | recovery s (steady p99 ms) | turn wait p50 / p99 / p99.9 / max ms | errors | harness drops | unfinished | Redis calls/msg | client cmds/msg | Redis CPU µs/msg | client CPU µs/msg | overlaps | out of order (inverted pairs) | replica timer lag p99 ms |',
      '| --- | --- | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |',
    )
    // Recovery is judged against the adapter's steady run at the recover rate, when that run was served.
    const served = (a) => {
      const s = ol.rows.find(
        (y) => (y.scenario === 'sweep' || y.scenario === 'reference') && y.adapter === a && y.offered === c.recover.rate,
      )
      return s && !s.unfinished && !s.harnessDrops && s.achievedOverall >= 0.95 * (s.offeredActual ?? s.offered)
    }
    const recovered = (x) =>
      !served(x.adapter)
        ? `n/a: its steady run at ${c.recover.rate} msg/s was not served (p99 ${f(x.steadyP99AtRecover)} ms)`
        : `${x.recoveryS === null ? 'not within the run' : x.recoveryS} (${f(x.steadyP99AtRecover)})`
    for (const x of ov)
      L.push(
        `| ${ADAPTER_LABELS[x.adapter]} | ${f(x.achievedOverload)} / ${f(x.achievedRecover)} / ${f(x.achievedOverall)} | ${x.backlogAtOverloadEnd} | ${x.backlogAtOverloadEnd ? `${f(x.drainRate)} (${f(x.drainS)}${x.drained ? '' : ', not drained'})` : 'no backlog'} | ${recovered(x)} | ${f(x.waitMs.p50)} / ${f(x.waitMs.p99)} / ${f(x.waitMs.p999)} / ${f(x.waitMs.max)} | ${x.errors} | ${x.harnessDrops} | ${x.unfinished} | ${f(x.redisCallsPerMsg)} | ${f(x.clientCmdsPerMsg)} | ${f(x.redisCpuUsPerMsg)} | ${f(x.clientCpuUsPerMsg)} | ${x.overlaps} | ${x.outOfOrder} (${x.invertedPairs}) | ${f(x.harnessLagMs?.p99)} |`,
      )
    L.push('')
    if (ol.waitingHeap)
      L.push(
        `A waiting message of botmesh-coord holds ${ol.waitingHeap.bytesPerMessage} bytes of its replica's heap (${ol.waitingHeap.messages} messages waiting on ${ol.waitingHeap.chats} held chats, after a full collection): what the garbage collector walks again and again under a backlog.`,
        '',
      )
  }
  const ct = ol.rows.filter((x) => x.scenario === 'contention')
  if (ct.length)
    L.push(
      `#### CPU contention: ${c.contention.rate} msg/s for ${c.contention.seconds} s with ${c.contention.busyLoops} busy-loop processes beside the replicas`,
      '',
      head,
      sep,
      ...ct.map(line),
      '',
    )
}

export function markdown(r) {
  const L = []
  const m = r.machine
  L.push(
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB RAM, ${m.os}; Node ${m.node}; redis-server ${m.redis}. Run: ${r.preset} (${r.startedAt}, ${r.durationS} s)${m.loadAvgAtStart ? `; load average ${m.loadAvgAtStart[0]} at start, ${m.loadAvgAtEnd?.[0]} at end (other work on the machine shares its cores)` : ''}.`,
  )
  if (r.sectionSeconds && Object.keys(r.sectionSeconds).length)
    L.push(
      '',
      `Sections: ${Object.entries(r.sectionSeconds)
        .map(([k, v]) => `${k} ${v} s`)
        .join(', ')}.`,
    )
  L.push('')
  if (r.targets?.length) {
    L.push('### Targets', '', '| area | target | measured | status |', '| --- | --- | --- | --- |')
    for (const t of r.targets) L.push(`| ${t.area} | ${t.target} | ${t.measured} | ${t.status}${t.by ? ` (${t.by})` : ''} |`)
    L.push('')
  }
  if (r.limit) {
    L.push(
      "### Redis's own limit (same private redis-server, one command in flight per client)",
      '',
      '| clients | PING/s redis-benchmark | EVALSHA `return 1`/s redis-benchmark | PING/s ioredis loop | EVALSHA/s ioredis loop |',
      '| ---: | ---: | ---: | ---: | ---: |',
    )
    for (const x of r.limit)
      L.push(`| ${x.clients} | ${f(x.pingRedisBenchmark)} | ${f(x.evalshaRedisBenchmark)} | ${f(x.pingIoredis)} | ${f(x.evalshaIoredis)} |`)
    L.push('')
  }
  if (r.turns) {
    const c = r.config
    const n = c.repeats ?? 1
    L.push(
      `### Turns: ${c.replicas} replica processes × ${c.inflight} in flight, ${c.chats} chats, up to ${c.messages} messages or ${c.maxSeconds} s per scenario; peers retry every ${c.retryMs} ms`,
      '',
    )
    if (n > 1)
      L.push(
        `Every scenario ran ${n} times, the adapters interleaved (their order turns by one place per run); each figure is the median of the runs, with their range (min–max) in brackets; the latency maxima are the largest of the runs; overlaps, order violations and errors are summed over the runs.`,
        '',
      )
    L.push(
      '| traffic | W ms | adapter | msg/s | acquire p50 / p99 / max ms | handoff gap p50 / p99 ms (n) | round trips/msg | Redis cmds/msg (incl. in Lua) | Redis CPU µs/msg | replica CPU µs/msg | overlaps | out of order (inverted pairs) | errors |',
    )
    L.push('| --- | ---: | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |')
    for (const s of r.turns) {
      L.push(
        `| ${PATTERN[s.pattern]} | ${s.workMs} | ${ADAPTER_LABELS[s.adapter]} | ${mr(s, 'msgPerS')}${s.holdBoundPct ? ` (${s.holdBoundPct}% of 1/hold)` : ''} | ${f(s.acquireMs.p50)} / ${f(s.acquireMs.p99)} / ${f(s.acquireMs.max)} | ${f(s.handoffGapMs.p50)} / ${f(s.handoffGapMs.p99)} (${s.handoffGapMs.n}) | ${s.roundTripsPerMsg} | ${s.serverCommandsPerMsg} | ${mr(s, 'redisCpuUsPerMsg')} | ${mr(s, 'nodeCpuUsPerMsg')} | ${s.overlaps} | ${s.outOfOrder} (${s.invertedPairs}) | ${s.errors} |`,
      )
    }
    L.push('')
  }
  if (r.openloop) openLoopMarkdown(r.openloop, L)
  if (r.renewal) {
    L.push(
      '### Renewals: one replica holding N chat turns, per renewal cycle (heartbeat, a renewal of every held lease, then the server identity)',
      '',
      '| leases held | commands sent | writes on the wire (batches) | Redis commands (incl. in Lua) | Redis CPU µs | wall ms |',
      '| ---: | ---: | ---: | ---: | ---: | ---: |',
    )
    for (const x of r.renewal)
      L.push(`| ${x.leases} | ${x.commandsSent} | ${x.writes} | ${x.redisCommands} | ${x.redisCpuUs} | ${x.wallMs} |`)
    L.push('')
  }
  if (r.renewalLoaded) {
    L.push(
      `### Renewals on time with the machine loaded: one replica holding N chat turns (leaseMs ${r.renewalLoaded[0]?.intervalMs * 3}, a cycle every ${r.renewalLoaded[0]?.intervalMs} ms) beside ${r.renewalLoaded[0]?.busyLoops} busy-loop processes`,
      '',
      '| leases held | cycles | cycle p50 ms | cycle max ms | leases lost | held at the end |',
      '| ---: | ---: | ---: | ---: | ---: | ---: |',
    )
    for (const x of r.renewalLoaded)
      L.push(`| ${x.leases} | ${x.cycles} | ${x.cycleP50Ms} | ${x.cycleMaxMs} | ${x.lost} | ${x.heldAtEnd} |`)
    L.push('')
  }
  if (r.failover) {
    const s = r.failover.summary
    L.push(
      `### Failover (leaseMs ${r.failover.leaseMs}, ${r.failover.trials} trial(s) each; kills right after a renewal: the worst case)`,
      '',
      '| event | p50 ms | max ms |',
      '| --- | ---: | ---: |',
    )
    L.push(`| turn holder SIGKILL → waiter granted | ${f(s.holderKillToGrantMs.p50)} | ${f(s.holderKillToGrantMs.max)} |`)
    L.push(`| … of which lease expiry → grant (Redis clock) | ${f(s.holderExpiryToGrantMs.p50)} | ${f(s.holderExpiryToGrantMs.max)} |`)
    L.push(`| provider leader SIGKILL → standby leads | ${f(s.leaderKillToLeadMs.p50)} | ${f(s.leaderKillToLeadMs.max)} |`)
    L.push(`| … of which lease expiry → grant (Redis clock) | ${f(s.leaderExpiryToLeadMs.p50)} | ${f(s.leaderExpiryToLeadMs.max)} |`)
    L.push(`| yield request → standby leads | ${f(s.yieldTakeoverMs.p50)} | ${f(s.yieldTakeoverMs.max)} |`)
    L.push('')
  }
  if (r.startup) {
    L.push(
      `### Start-up of the CLI (a fresh process per command; medians of ${r.startup.rounds} interleaved rounds, ratios to a bare \`node -e 0\` in the same run)`,
      '',
      `| command | wall ms | × node -e 0 |${r.startup.rssMeasured ? ' max RSS MB |' : ''}`,
      `| --- | ---: | ---: |${r.startup.rssMeasured ? ' ---: |' : ''}`,
    )
    for (const c of r.startup.cases) L.push(`| ${c.label} | ${c.medianMs} | ${c.ratio} |${r.startup.rssMeasured ? ` ${c.rssMb} |` : ''}`)
    L.push('')
  }
  if (r.scale?.length) {
    L.push('### Operator side at scale (CLI run as a subprocess; Redis commands summed over every master)', '')
    L.push(
      '| layout | state | command | wall ms (incl. node start) | Redis commands (excl. connection set-up) | main commands |',
      '| --- | --- | --- | ---: | ---: | --- |',
    )
    for (const sc of r.scale) {
      const state = `${sc.chats} leases, ${sc.tickets} tickets, ${sc.checkpoints} checkpoints`
      L.push(`| ${sc.layout} | — | \`--version\` (node start) | ${sc.nodeStartupMs} | 0 | |`)
      for (const c of sc.cli) {
        const top = c.byCommand
          ? Object.entries(c.byCommand)
              .sort((a, b) => b[1] - a[1])
              .slice(0, 3)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')
          : ''
        const extra =
          c.status === 'ok' && c.rssMb
            ? `; first byte ${c.firstByteMs ?? '-'} ms, ${c.rssMb} MB RSS, slowest command ${round((c.slowlog?.slowestUs ?? 0) / 1000, 1)} ms, other client p99 ${c.otherClient?.p99Ms} ms`
            : ''
        L.push(
          `| ${sc.layout} | ${state} | \`${c.command}\` | ${c.status === 'ok' ? c.ms : `${c.status}`} | ${c.status === 'ok' ? `${c.redisCommands} (${c.dataCommands})` : (c.note ?? '')} | ${top}${extra} |`,
        )
      }
      const sn = sc.snapshot
      if (sn)
        L.push(
          ...(sn.status === 'ok'
            ? [
                `| ${sc.layout} | ${state} | \`snapshot -o state.json.gz\` (${sn.keys} keys, ${sn.records} records; file ${sn.bytes >= 1048576 ? `${(sn.bytes / 1048576).toFixed(1)} MiB` : `${(sn.bytes / 1024).toFixed(1)} KiB`}) | ${sn.ms} | ${sn.redisCommands} (${sn.dataCommands}) | |`,
                `| ${sc.layout} | ${state} | \`--from state.json.gz chat ls\` (every chat, no Redis) | ${sn.replayMs ?? 'refused'} | 0 | ${sn.replayMs === null ? (sn.replayNote ?? '') : sn.replayRssMb == null ? '' : `${sn.replayRssMb} MB RSS`} |`,
              ]
            : [`| ${sc.layout} | ${state} | \`snapshot -o\` | ${sn.status} | ${sn.note ?? ''} | |`]),
        )
      const d = sc.doctor
      if (d)
        L.push(
          `| ${sc.layout} | ${state} | \`doctor --json\` | ${d.status === 'ok' ? d.ms : d.status} | ${d.status === 'ok' ? `${d.redisCommands} (${d.dataCommands})` : (d.note ?? '')} | ${d.status === 'ok' ? `${d.rssMb} MB RSS, slowest command ${round((d.slowlog?.slowestUs ?? 0) / 1000, 1)} ms, other client p99 ${d.otherClient?.p99Ms} ms` : ''} |`,
        )
      for (const w of [sc.watch.small, sc.watch.large]) {
        L.push(
          `| ${sc.layout} | ${w.chats} chats | \`watch --jsonl\` per refresh | | ${w.status === 'ok' ? w.commandsPerRefresh : `${w.status}: ${w.note ?? ''}`} | |`,
        )
      }
      for (const [label, h] of Object.entries(sc.head ?? {}))
        L.push(
          `| ${sc.layout} | ${state} | \`${label}\` (first 5 lines; exit after the pipe closed) | ${h.firstLinesMs ?? '-'}; ${h.exitMs} | | |`,
        )
      for (const h of sc.held ?? []) {
        const w = h.watch
        const e = h.exporter
        // The replicas' renewal reads counted with the readers' (an older result has no such field).
        const busy = h.replicasQuiet === false ? ' (a renewal cycle of the replicas fell inside: their reads are counted too)' : ''
        L.push(
          `| ${sc.layout} | ${h.replicas} replicas × ${h.turns} held turns (heartbeats naming them)${busy} | \`watch --jsonl\` per refresh | | ${w.status === 'ok' ? w.commandsPerRefresh : w.status} | |`,
          `| ${sc.layout} | ${h.replicas} replicas × ${h.turns} held turns | \`exporter\` per scrape | ${e.status === 'ok' ? e.medianScrapeMs : ''} | ${e.status === 'ok' ? e.commandsPerScrape : e.status} | |`,
        )
      }
      for (const e of [sc.exporter?.small, sc.exporter?.large].filter(Boolean)) {
        L.push(
          `| ${sc.layout} | ${e.chats} chats | \`exporter\` per scrape | ${e.status === 'ok' ? e.medianScrapeMs : ''} | ${e.status === 'ok' ? e.commandsPerScrape : `${e.status}: ${e.note ?? ''}`} | |`,
        )
      }
    }
    L.push('')
  }
  if (r.memory) {
    const x = r.memory
    L.push(
      `### Redis memory (real acquisitions of ${x.chats} chats; the keyspace's bytes — MEMORY STATS dataset.bytes and key tables — before and after, median of ${x.passes?.length ?? 1} passes; MEMORY USAGE beside)`,
      '',
      '| what | bytes (keyspace Δ / n) | MEMORY USAGE, mean over the chats | MEMORY USAGE of chat:1 |',
      '| --- | ---: | ---: | ---: |',
    )
    const mean = x.memoryUsageMean ?? {}
    const d = (a, b) => (a === undefined || b === undefined ? 'n/a' : a - b)
    L.push(`| held chat (state hash) | ${x.perHeldChatBytes} | ${f(mean.heldChat)} | ${x.memoryUsageSample.heldChat} |`)
    L.push(
      `| queued ticket (zset entry + ticket fields; the first ticket also creates the zset) | ${x.perQueuedTicketBytes} | ${d(mean.heldChatWithOneTicket, mean.heldChat)} | ${x.memoryUsageSample.heldChatWithOneTicket - x.memoryUsageSample.heldChat} |`,
    )
    L.push(
      `| idle chat, fence kept (${x.idleChatTtlHours} h TTL) | ${x.perIdleChatBytes} | ${f(mean.idleChat)} | ${x.memoryUsageSample.idleChat} |`,
    )
    L.push('')
  }
  return L.join('\n')
}
