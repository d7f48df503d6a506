// docs/performance.md, written whole by every full `npm run bench` (and by `--render latest.json`).
const find = (r, pattern, w, a) => r.turns?.find((s) => s.pattern === pattern && s.workMs === w && s.adapter === a)

/** What a turn costs beside the best peer's lock, and where the cost goes (measured outside the bench, said once). */
function turnCost(b, p) {
  return `A botmesh-coord turn is two Lua scripts that run about ${b?.serverCommandsPerMsg} Redis commands in all (taking a free chat: TIME, one HMGET, one HSET, PEXPIRE; giving it back with nobody queued: TIME, HMGET, HDEL — the queue is not read when no ticket was issued after the holder's), against ${p?.serverCommandsPerMsg} for ${p?.adapter}; Redis CPU per message ${b?.redisCpuUsPerMsg} µs vs ${p?.redisCpuUsPerMsg} µs, replica CPU ${b?.nodeCpuUsPerMsg} µs vs ${p?.nodeCpuUsPerMsg} µs. Most of a script's cost is Lua itself, not the commands it runs: INFO commandstats puts the commands inside at about a quarter of the scripts' time, and callgrind on redis-server, with a free chat's take and release sent in pipelines over 500 chats, counts about 312,000 instructions per turn, reading and answering the two calls included, against 197,000 for two scripts that run the same Redis commands with nothing around them, and 24,000 for an EVALSHA of \`return 1\` (31,000 with TIME). Of the difference, about 20,000 a script is its chunk making its helpers again on every call (Redis 7 Functions would make them once); the rest is the turn's logic. On a shared chat each queued ticket adds 1,000–7,000 per message, since every field lookup in the chat's hash passes the tickets' fields. On the replica, commands sent in one turn of the event loop now leave in one write; the rest is the turn's own bookkeeping (FIFO ticket order per chat, the lease table, fences, the push routing) that a bare lock does not have.`
}

// Why the snapshot and doctor targets are missed: the price of the walks' limit (both say it).
const WALK_TRADE = ` Since the walks keep at most two short commands at a host's servers (so that other clients wait about a millisecond behind them: the SLOWLOG and other-client targets), Redis and the CLI take turns more than they overlap: at a million chats a doctor costs Redis about 26–29 s of CPU and the CLI about 25 s, and the Cluster's masters, on one host here, are read two commands at a time in all; with calls of 250 keys sent together and SCAN COUNT 2000 the same commands took 27.7 s (snapshot) and 31.3 s (doctor) on a run where another client's p99 read 18 / 36 ms.`

function why(t, r) {
  const b2 = find(r, 'hot1', 2, 'botmesh')
  if (/W=0$/.test(t.area)) {
    const pattern = t.area.startsWith('one hot') ? 'hot1' : t.area.startsWith('10%') ? 'hot10' : 'uniform'
    const b = find(r, pattern, 0, 'botmesh')
    const p = r.turns
      .filter((x) => x.pattern === pattern && x.workMs === 0 && x.adapter !== 'botmesh')
      .sort((x, y) => y.msgPerS - x.msgPerS)[0]
    return `${turnCost(b, p)}${pattern === 'uniform' ? '' : " On a shared chat, a second message of one chat queues a ticket (HSET, ZADD, two PEXPIREs) and the release grants it (ZPOPMIN, HMGET, HDEL, HSET) and PUBLISHes the grant, or, when the ticket is one of the releasing replica's own, hands it over in its reply: strict FIFO with a push costs more per message than a lock whose waiters poll and retry, and hands the turn to the oldest ticket even when its replica is descheduled."}`
  }
  if (t.area.startsWith('uncontended') && t.target.startsWith('throughput')) {
    const w = /W=(\d+)/.exec(t.target)?.[1]
    const b = find(r, 'uniform', Number(w), 'botmesh')
    const p = r.turns
      .filter((s) => s.pattern === 'uniform' && s.workMs === Number(w) && s.adapter !== 'botmesh')
      .sort((x, y) => y.msgPerS - x.msgPerS)[0]
    return `The run is CPU-bound: Redis and ${r.config.replicas} replica processes share ${r.machine.cpus} cores. ${turnCost(b, p)} The round trips are the same (${b?.roundTripsPerMsg} vs ${p?.roundTripsPerMsg}).`
  }
  if (t.target.startsWith('≤ 2 round trips'))
    return 'Extra round trips are polls of a queued ticket when two messages of one chat meet, and the renewal/heartbeat cycle.'
  if (t.target.startsWith('≤ 3 round trips'))
    return `Per message: 1 take-ticket + 1 release. A turn from another replica's release is an offer (a third of the lease, so a waiter that died is not granted a whole lease), pushed with Redis's clock: the woken waiter uses it at once when the push is of its take's ticket and came after a call of its replica was answered, and takes it up by a renewal only if it holds it past half of that, else with a poll first (a hand-off between two messages of one replica comes in the release's reply and needs none); polls are only a safety net while the push channel is subscribed (about ${b2 ? (b2.roundTripsPerMsg - 2).toFixed(2) : '?'} polls and take-ups per message here).`
  if (t.target.startsWith('throughput ≥ best peer') || t.target.startsWith('handoff gap')) {
    return `The handoff is on the critical path of a hot chat: the holder's release script grants the next ticket and PUBLISHes the grant (or, when the next ticket is its own replica's, returns the grant in its reply, about 40% of hand-offs with four replicas queued in FIFO order, measured apart from the run below), and the woken replica uses the offer (handoff gap p50 ${b2?.handoffGapMs.p50} ms: one script, one pub/sub hop, and a take-up poll's round trip when the push cannot be placed after a call of the waiter's replica); the peers' next SET often lands right after the DEL. The rest is CPU on ${r.machine.cpus} shared cores: each botmesh-coord message costs ${b2?.redisCpuUsPerMsg} µs of Redis CPU (two scripts with the FIFO queue, fences and the previous holder, and a take-up of some turns from another replica) against the peers' plain SET and a small script — and strict FIFO hands the turn to the oldest ticket even when its replica is the one descheduled, where a poller that happens to run wins a plain lock.`
  }
  if (t.target.startsWith('≥ 90% of 1/W'))
    return `Each handoff costs the release script, one pub/sub hop, at times a take-up poll, and the woken replica's scheduling on ${r.machine.cpus} shared cores (handoff gap p50 ${b2?.handoffGapMs.p50} ms, mean ${b2?.handoffGapMs.mean} ms against a hold of ${b2?.holdMs.mean} ms).`
  if (t.target.startsWith('longest wait'))
    return `Tickets are strictly FIFO, so a wait is the queue ahead times (hold + handoff); the tail comes from slow handoffs (gap p99 ${b2?.handoffGapMs.p99} ms, max ${b2?.handoffGapMs.max} ms) when the woken replica is descheduled on the ${r.machine.cpus} shared cores. The peers' longest waits are many times longer (no queue: unlucky pollers starve).`
  if (t.target.startsWith('chat inspect'))
    return "After the connection's own set-up, the first round trip carries Redis TIME and the key schema (the connection check), the chat's own keys (state, checkpoint and its TTL, handover marker: one slot) and the replica index (ZRANGE); the second reads the live replicas' heartbeat records, whose names the index gives. Round trips are counted inside the CLI process on every connection it opens; requests sent to two masters at once count once."
  if (t.area === 'memory')
    return "Per item over real acquisitions: the keyspace's bytes (MEMORY STATS dataset.bytes and the key tables, read once two reads 250 ms apart agree), the median of three passes after one thrown away; plain used_memory deltas moved by tens of bytes per item from run to run with the clients' buffers, which is why the target is the version it was set on measured this same way. Since that version the chat state records the request id of the holder's acquisition and of each queued ticket (so that a take or a withdrawal sent twice finds the ticket its first run took); those fields hold only the request's sequence number beside the incarnation the hash already names, and a turn granted at once keeps no retry field (its holder's fields name the request). The chat state also keeps its epoch (`ep`, Redis's clock in µs when a take first found the hash without one), so that a poll can tell a state made again since its take from the one its ticket was queued in: 16 bytes per chat, idle ones included."
  if (t.target.startsWith('leases ls') || t.target.startsWith('chat ls'))
    return `The listing walks the keyspace once (SCAN COUNT 300 with a MATCH of the listed kinds only: chats, leads and locks together, so Redis keeps checkpoints, queues and heartbeats to itself) and reads each batch with read-only script calls of at most 40 keys (read-listing-0: each key's named fields, its size, a queue's length and first 16 tickets — never a whole hash, so no call holds Redis long whatever a key holds). Each master's next batches are asked for while one is decoded, at most two commands at a host's servers at a time (a Cluster's masters on one host together), a Cluster's masters are read at once, each batch becomes rows as it arrives, and the JSON document is written a few hundred rows at a time. What is left is one Node process's CPU on ${(r.scale?.[0]?.chats ?? 100000).toLocaleString('en-US')} rows, on the same ${r.machine.cpus} cores as Redis: Node start-up and the CLI's modules, garbage collection, JSON.stringify of a document of tens of MB, decoding the replies and building rows, sorting. It grows linearly with the number of leases.`
  if (t.target.startsWith('no Redis command') || t.target.startsWith("another client's p99")) {
    // The walks (listings, snapshot, doctor) apart from chat inspect, whose run is a few hundred ms.
    const sc = r.scale?.find((x) => t.area === `operator (${x.layout})`)
    const walks = (sc ? [...sc.cli, sc.snapshot, sc.doctor] : []).filter(
      (c) => c?.status === 'ok' && c.otherClient && !c.command.startsWith('chat inspect'),
    )
    const p99s = walks.map((c) => c.otherClient.p99Ms)
    const range = p99s.length ? `${Math.min(...p99s)}–${Math.max(...p99s)} ms` : 'n/a'
    return `Each command the tool sends is short — a read-listing-0 call of 40 keys costs about 0.5 ms of Redis time, a read-snapshot-0 call of 50 keys about 0.3 ms, a SCAN of 300 keys about 0.5 ms — and a command has at most two of them at a host's servers at a time (a Cluster's masters on one host together), since Redis runs every command a client's read brings in before it serves another client: during the listings, the snapshot and doctor another client's p99 read ${range} here. What is left is wall time on ${r.machine.cpus} cores shared by the CLI, Redis${r.scale?.some((x) => x.layout === 'cluster') ? ' (3 masters on a Cluster)' : ''} and the measuring client: the few commands logged over 10 ms (among some 60,000 a doctor sends) are ones Redis was descheduled in the middle of, and chat inspect's p99 is the worst of the hundred-odd PINGs taken while its Node process starts on the same cores. Before the walks were limited this way (calls of 250 keys sent together, SCAN COUNT 2000), the same runs logged 25 / 1,341 commands over 10 ms and another client's p99 read 18 / 36 ms.`
  }
  if (t.target.startsWith('snapshot at the pace'))
    return `The capture reads each master's SCAN batches with read-only script calls, at most two at a host's servers at a time, a few batches ahead of the one being written out (gzip at its fastest level); what is left is Redis reading every hash whole (about 3 million commands inside the scripts at a million chats) and the CLI's JSON and gzip, on the same ${r.machine.cpus} cores. A snapshot of a million chats is about 500 MiB of JSON: \`--from\` reads it as it streams in, each record parsed on its own, and holds each record packed outside the heap in a few dozen bytes (about 220 MB for a million chats), decoded again when a command reads its key.${WALK_TRADE}`
  if (t.target.startsWith('doctor at the pace'))
    return `doctor reads the replica index, walks the keyspace once (heartbeat records, chats, leads, locks, handover markers and checkpoints, each checkpoint judged against its chat's turn once both are read) and once, bounded, for keys of the other layout, and keeps counts and first examples, not rows.${WALK_TRADE}`
  if (t.area.startsWith('open loop')) return openLoopWhy(t, r)
  if (t.target.startsWith('SIGKILL') || t.area === 'failover') return 'See the failover table.'
  return ''
}

/** A missed open-loop target: the figures of the same run that go with it (in full once per page). */
let explained = false
function openLoopWhy(t, r) {
  const ol = r.openloop
  const row = (scenario, a, rate) =>
    ol.rows.find((x) => x.scenario === scenario && x.adapter === a && (rate === undefined || x.offered === rate))
  const b = row('overload', 'botmesh')
  const lowest = Math.min(...ol.config.rates)
  const none = row('sweep', 'botmesh', lowest)
  const load = r.merged?.openloop?.machine?.loadAvgAtStart?.[0] ?? r.machine.loadAvgAtStart?.[0]
  const knee = ol.knees?.botmesh
  const machine = `One run per scenario and adapter, Redis and the ${ol.config.replicas} replica processes on ${r.machine.cpus} cores shared with other work (load average ${load} at the start of the run); botmesh-coord's knee in this run was ${knee ?? `below ${lowest}`} msg/s.`
  const backlog = b
    ? ` Under backlog a queued message waits for the pushed grant (only each replica's oldest message of a chat polls, about every leaseMs / 6), and one granted by another replica's release uses the pushed offer at once when it can place the push after a call of its replica that Redis answered (else it takes the offer up with one more script call first), so a queued message costs its take, its release and the release that granted it (which pops the queue, reads the ticket and publishes the grant), where a free chat's costs two scripts that never read the queue: in the overload run it sent ${b.clientCmdsPerMsg} commands per completed message (${none?.clientCmdsPerMsg} at ${lowest} msg/s) and Redis ran ${b.redisCallsPerMsg} (${none?.redisCallsPerMsg}), at ${b.clientCpuUsPerMsg} µs of replica CPU and ${b.redisCpuUsPerMsg} µs of Redis CPU per message; the replicas' timers fired late by ${b.harnessLagMs?.p99} ms (p99), ${b.errors} turns failed${b.errorSamples?.length ? ` (${[...new Set(b.errorSamples.map((e) => e.replace(/"chat:\d+"/, 'a chat')))].join('; ')})` : ''}, and the ${b.backlogAtOverloadEnd} messages of backlog at the overload's end were ${b.drained ? `drained in ${b.drainS} s` : `not drained in the ${ol.config.drainS} s the run may drain`} (${b.drainRate} grants/s meanwhile).${ol.waitingHeap ? ` A waiting message holds ${ol.waitingHeap.bytesPerMessage} bytes of its replica's heap (measured apart with ${ol.waitingHeap.messages} waiting).` : ''}`
    : ''
  if (explained && !t.area.endsWith('contention')) return `${machine} See the first open-loop target above.`
  explained = true
  if (t.area.endsWith('contention')) {
    const c = row('contention', 'botmesh')
    const plain = row('sweep', 'botmesh', ol.config.contention.rate)
    return `${machine}${plain ? ` Without the busy loops, at the same rate, its p99 was ${plain.waitMs.p99} ms (${plain.unfinished} unfinished); with them ${c?.waitMs.p99} ms.` : ''}${backlog}`
  }
  return `${machine}${backlog}`
}

export function performancePage(r, md) {
  explained = false
  const missed = (r.targets ?? []).filter((t) => t.status === 'missed')
  const na = (r.targets ?? []).filter((t) => t.status === 'n/a')
  const m = r.machine
  const L = []
  L.push('# Performance', '', '<!-- Written by `npm run bench` (bench/lib/performance-page.js): edit the generator, not this page. -->', '')
  L.push(
    `\`npm run bench\` (folder [bench/](../bench)) measures, in one run on one machine, botmesh-coord's turns side by side with redlock 5 (one instance), redis-semaphore's \`Mutex\` and a hand-written \`SET NX PX\` + poll + Lua compare-and-delete lock, against what the same private redis-server can do; then the same adapters in an open loop (messages arriving at a rate as people send them, a sweep of rates, an overload and the recovery after it, CPU contention; chart: [openloop.svg](openloop.svg)); then the cost of one replica's renewal cycle at 10, 100 and 1,000 held leases and its timeliness at 1,000 to 100,000 held leases beside two busy loops, failover times and the operator side at scale. Every turn scenario runs three times (\`--repeats\`), the adapters interleaved so that the machine's load falls on them alike; the tables show medians with their range, and the targets are judged on the medians. Flags: \`npm run bench -- --help\` (\`--quick\` for a short run). Results: [bench/results/latest.md](../bench/results/latest.md) and \`latest.json\`.`,
    '',
  )
  L.push(
    `Latest run: ${m.cpus} vCPU ${m.cpuModel}, ${m.memoryGiB} GiB RAM, Node ${m.node}, redis-server ${m.redis} (${r.startedAt.slice(0, 10)}, preset \`${r.preset}\`). Redis and the ${r.config.replicas} replica processes share those ${m.cpus} cores, so throughput figures are CPU-bound; compare rows, not machines.`,
    '',
  )
  L.push(
    "How it measures: every replica is its own process. Grant and release times are taken on the machine-wide monotonic clock (`process.hrtime`, CLOCK_MONOTONIC, the same in every process), so the critical sections of one chat can be compared across processes: an **overlap** is a grant observed before another holder of that chat started its release (observed sections lie inside the real holding intervals, so an overlap is never a false alarm); **out of order** counts a replica's messages for one chat served after a message that arrived later at that replica (and the inverted pairs); the **handoff gap** is one holder's release to the next grant when that message was already waiting. **Round trips** are the commands the replica processes sent (counted in ioredis, renewals and heartbeats included); **Redis commands** come from `INFO commandstats` and include those run inside Lua scripts. The operator-side state (live leases, tickets, checkpoints) is written directly with pipelined HSET/ZADD in the layout of [redis-layout.md](redis-layout.md) (names from `KeyLayout`), held by real replicas; memory per key is measured with real acquisitions. The CLI runs as a subprocess; its times include Node start-up (shown separately). `botmesh-coord exporter` runs the same way on a free port: after a first scrape (which also finds where the event stream stands), `--refreshes` scrapes of `/metrics` with `INFO commandstats` around them give the Redis commands of one scrape, and the median time of a scrape.",
    '',
  )
  const merges = new Map()
  for (const [section, run] of Object.entries(r.merged ?? {})) {
    const key = `${run.startedAt}`
    merges.set(key, { run, sections: [...(merges.get(key)?.sections ?? []), section] })
  }
  const reruns = [...merges.values()].map(
    ({ run, sections }) =>
      `the ${sections.join(' and ')} section${sections.length > 1 ? 's come' : ' comes'} from \`npm run bench -- ${run.args ? run.args.join(' ') : `--sections ${(run.sections ?? sections).join(',')} --merge`}\`, ${run.startedAt.slice(0, 10)}, load average ${run.machine.loadAvgAtStart?.[0] ?? '?'} at its start`,
  )
  if (reruns.length) {
    const text = reruns.join('; ')
    L.push(`(${text[0].toUpperCase()}${text.slice(1)}, re-run on the final code; the other sections are from the run above.)`, '')
  }
  if (r.failoverRunSeparately)
    L.push(
      `(The failover rows come from \`--sections failover\` run right after the full run, ${r.failoverRunSeparately}: the full run's failover section hit a harness race, since fixed.)`,
      '',
    )
  // The chart lives beside this page, as a copy does beside latest.md.
  L.push(md.split('\n').slice(2).join('\n'), '')
  if (missed.length) {
    L.push('### Where a target is missed, by how much and why', '')
    for (const t of missed) L.push(`- **${t.area}: ${t.target}** — measured ${t.measured}${t.by ? `, ${t.by}` : ''}. ${why(t, r)}`)
    L.push('')
  }
  if (na.length) {
    L.push('### Not measured yet', '')
    for (const t of na) L.push(`- ${t.area}: ${t.target} — ${t.measured}. The benchmark picks the command up by itself once it exists.`)
    L.push('')
  }
  const peersNote =
    "Peers: redlock 5.0.0-beta.2 and redis-semaphore 5.8 both work with the installed ioredis 6 (redlock is given the ioredis client and calls `evalsha`/`eval`; redis-semaphore's `Mutex(client, key, opts)` uses `set … NX PX` and `evalsha`). Both are tuned to poll every " +
    r.config.retryMs +
    " ms (redlock's default is 200 ms ± 100 ms, which would make it look far worse), the naive lock too."
  L.push(peersNote, '')
  return L.join('\n')
}

import { writeFileSync } from 'node:fs'

/** Write docs/performance.md. */
export function writePerformancePage(path, text) {
  writeFileSync(path, `${text.trim()}\n`)
}
