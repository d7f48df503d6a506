import { tmpdir } from 'node:os'
import { join } from 'node:path'

// Command-line flags of `node bench/run.js` (also `npm run bench -- <flags>`).
export const HELP = `botmesh-coord benchmark: node bench/run.js [flags]
  --quick                 small, fast run (about 2 minutes)
  --smoke                 tiny run that only checks that everything runs (CI)
  --sections a,b          limit,turns,openloop,renewal,failover,startup,scale (default: all)
  --replicas P            replica processes in the turns benchmark (default 4)
  --inflight L            messages in flight per replica (default 8)
  --chats C               chats of the uniform and 10%/90% traffic (default 1000)
  --messages M            messages per scenario, all replicas together (default 20000)
  --max-seconds S         cap of one scenario's duration (default 8)
  --repeats N             runs of every turn scenario, adapters interleaved; rows show the median and
                          the range; also the memory measurement's passes (default 3; --quick and --smoke: 1)
  --work 0,2              handler work W in ms (default 0,2)
  --patterns p,..         uniform,hot10,hot1 (default all)
  --adapters a,..         botmesh,redlock,semaphore,naive (default all)
  --lease-ms N            botmesh leaseMs in the turns benchmark (default 15000)
  --peer-ttl-ms N         lock TTL of the peers (default 10000)
  --retry-ms N            the peers' retry interval while a lock is taken (default 10)
  --openloop-rates a,b    open loop: the steady sweep's offered rates, msg/s (default 1000,2000,4500,6500,9000)
  --openloop-seconds S    arrival window of each steady run (default 3)
  --openloop-overload R:S overload rate for S seconds; R auto: twice the SET NX lock's knee in the
                          sweep (its capacity as far as the sweep measured it; 9000 without it) (default auto:6)
  --openloop-recover R:S  then the recover rate for S seconds (default 4500:10)
  --openloop-contention R:S  steady rate with busy loops beside the replicas (default 2000:3)
  --openloop-busy N       busy-loop processes of the contention run (default 2)
  --openloop-handler-ms M median handler time, lognormal (default 5; sigma --openloop-handler-sigma, 0.5)
  --openloop-burst N      messages per arrival, 30 ms apart (default 2)
  --openloop-cap N        outstanding messages per replica past which the harness drops (default 20000)
  --openloop-heap N       messages waiting at once when the replica's heap per waiting message is measured (default 20000)
  --openloop-drain-s S    how long a run may drain after its last arrival (default 10)
  --renew-leases a,b      leases held at once in the renewal section (default 10,100,1000)
  --renew-cycles N        renewal cycles measured per count (default 5; also the loaded measurement's)
  --renew-held a,b        leases one replica holds while busy loops load the machine (default 1000,10000,100000)
  --renew-busy N          busy-loop processes beside it (default 2)
  --failover-lease-ms N   leaseMs of the failover runs (default 3000)
  --failover-trials N     kills and yields per kind (default 3)
  --scale-chats N         live chat leases (and checkpoints) for the operator side (default 100000)
  --scale-tickets N       queued tickets (default 10000)
  --scale-small N         the small state for the dashboard comparison (default 1000)
  --refreshes N           dashboard refreshes measured (default 3)
  --memory-chats N        chats for the memory measurement (default 2000)
  --startup-rounds N      runs of each start-up case, interleaved (default 15)
  --no-cluster            skip the 3-master cluster in the scale section
  --out DIR               where latest.json / latest.md go (default bench/results; --smoke: a temp dir)
  --no-docs               do not rewrite docs/performance.md
  --merge                 run only --sections and merge them into the saved latest.json (the page says which
                          sections come from which run)
  --render FILE           only re-render latest.md (beside FILE) and docs/performance.md from a saved latest.json
Environment: BENCH_WORKER_PROF=DIR writes a CPU profile (.cpuprofile) of every turns and open-loop replica process into DIR.
`

/** A replica process's Node flags: a CPU profile into BENCH_WORKER_PROF when it is set (see HELP). */
export const workerExecArgv = () => (process.env.BENCH_WORKER_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_WORKER_PROF] : [])

const PRESETS = {
  full: {},
  quick: {
    messages: 4000,
    maxSeconds: 2.5,
    repeats: 1,
    chats: 500,
    failoverLeaseMs: 1000,
    failoverTrials: 1,
    scaleChats: 20000,
    scaleTickets: 2000,
    refreshes: 2,
    memoryChats: 1000,
    startupRounds: 5,
    openloopRates: [1000, 2000, 4000],
    openloopSeconds: 1.5,
    openloopOverloadRate: 8000,
    openloopOverloadS: 2,
    openloopRecoverRate: 4000,
    openloopRecoverS: 3,
    openloopContentionRate: 2000,
    openloopContentionS: 1.5,
    openloopDrainS: 5,
    openloopHeapMessages: 5000,
    renewHeld: [1000, 10000],
    docs: false,
  },
  smoke: {
    replicas: 2,
    inflight: 2,
    chats: 20,
    messages: 60,
    maxSeconds: 1,
    repeats: 1,
    work: [0],
    patterns: ['uniform', 'hot1'],
    warmup: 4,
    renewLeases: [10, 100],
    renewCycles: 2,
    renewHeld: [100],
    renewHeldLeaseMs: 1500,
    renewBusy: 0,
    failoverLeaseMs: 600,
    failoverTrials: 1,
    scaleChats: 300,
    scaleTickets: 50,
    scaleSmall: 100,
    heldReplicas: [2],
    refreshes: 1,
    memoryChats: 50,
    startupRounds: 2,
    openloopRates: [300],
    openloopSeconds: 0.6,
    openloopOverloadRate: 600,
    openloopOverloadS: 0.6,
    openloopRecoverRate: 300,
    openloopRecoverS: 0.6,
    openloopContentionRate: 100,
    openloopContentionS: 0.5,
    openloopBusy: 1,
    openloopDrainS: 3,
    openloopHeapMessages: 500,
    limitRequests: 2000,
    limitSeconds: 0.2,
    cluster: false,
    docs: false,
    out: join(tmpdir(), 'botmesh-bench-smoke'),
  },
}

export function parseArgs(argv) {
  const o = {
    preset: 'full',
    sections: ['limit', 'turns', 'openloop', 'renewal', 'failover', 'startup', 'scale'],
    replicas: 4,
    inflight: 8,
    chats: 1000,
    messages: 20000,
    maxSeconds: 8,
    repeats: 3,
    work: [0, 2],
    patterns: ['uniform', 'hot10', 'hot1'],
    adapters: ['botmesh', 'redlock', 'semaphore', 'naive'],
    leaseMs: 15000,
    peerTtlMs: 10000,
    retryMs: 10,
    warmup: 40,
    renewLeases: [10, 100, 1000],
    renewCycles: 5,
    renewHeld: [1000, 10000, 100000],
    renewHeldLeaseMs: 15000,
    renewBusy: 2,
    failoverLeaseMs: 3000,
    failoverTrials: 3,
    scaleChats: 100000,
    scaleTickets: 10000,
    scaleSmall: 1000,
    heldReplicas: [4, 20, 50],
    refreshes: 3,
    memoryChats: 2000,
    startupRounds: 15,
    openloopRates: [1000, 2000, 4500, 6500, 9000],
    openloopSeconds: 3,
    openloopOverloadRate: 'auto',
    openloopOverloadS: 6,
    openloopRecoverRate: 4500,
    openloopRecoverS: 10,
    openloopContentionRate: 2000,
    openloopContentionS: 3,
    openloopBusy: 2,
    openloopHandlerMs: 5,
    openloopHandlerSigma: 0.5,
    openloopBurst: 2,
    openloopCap: 20000,
    openloopHeapMessages: 20000,
    openloopDrainS: 10,
    limitRequests: 100000,
    limitSeconds: 2,
    cluster: true,
    docs: true,
    out: null,
    render: null,
    help: false,
  }
  const given = {}
  const list = (v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  const num = (v, flag) => {
    const n = Number(v)
    if (!Number.isFinite(n)) throw new Error(`${flag} needs a number`)
    return n
  }
  // RATE:SECONDS; `auto` as the rate where the flag takes it (the overload).
  const rateSeconds = (v, flag, auto = false) => {
    const [rs, ss] = String(v).split(':')
    const r = auto && rs === 'auto' ? rs : Number(rs)
    const sec = Number(ss)
    if ((r !== 'auto' && !Number.isFinite(r)) || !Number.isFinite(sec)) throw new Error(`${flag} needs RATE:SECONDS`)
    return { rate: r, seconds: sec }
  }
  const map = {
    '--sections': ['sections', list],
    '--replicas': ['replicas', num],
    '--inflight': ['inflight', num],
    '--chats': ['chats', num],
    '--messages': ['messages', num],
    '--max-seconds': ['maxSeconds', num],
    '--repeats': ['repeats', num],
    '--work': ['work', (v) => list(v).map(Number)],
    '--patterns': ['patterns', list],
    '--adapters': ['adapters', list],
    '--lease-ms': ['leaseMs', num],
    '--peer-ttl-ms': ['peerTtlMs', num],
    '--retry-ms': ['retryMs', num],
    '--renew-leases': ['renewLeases', (v) => list(v).map(Number)],
    '--renew-cycles': ['renewCycles', num],
    '--renew-held': ['renewHeld', (v) => list(v).map(Number)],
    '--renew-busy': ['renewBusy', num],
    '--failover-lease-ms': ['failoverLeaseMs', num],
    '--failover-trials': ['failoverTrials', num],
    '--scale-chats': ['scaleChats', num],
    '--scale-tickets': ['scaleTickets', num],
    '--scale-small': ['scaleSmall', num],
    '--refreshes': ['refreshes', num],
    '--memory-chats': ['memoryChats', num],
    '--startup-rounds': ['startupRounds', num],
    '--openloop-rates': ['openloopRates', (v) => list(v).map(Number)],
    '--openloop-seconds': ['openloopSeconds', num],
    '--openloop-overload': ['openloopOverload', (v, flag) => rateSeconds(v, flag, true)],
    '--openloop-recover': ['openloopRecover', rateSeconds],
    '--openloop-contention': ['openloopContention', rateSeconds],
    '--openloop-busy': ['openloopBusy', num],
    '--openloop-handler-ms': ['openloopHandlerMs', num],
    '--openloop-handler-sigma': ['openloopHandlerSigma', num],
    '--openloop-burst': ['openloopBurst', num],
    '--openloop-cap': ['openloopCap', num],
    '--openloop-heap': ['openloopHeapMessages', num],
    '--openloop-drain-s': ['openloopDrainS', num],
    '--out': ['out', String],
    '--render': ['render', String],
  }
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    let v = null
    if (a.includes('=')) [a, v] = [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
    if (a === '--quick') o.preset = 'quick'
    else if (a === '--smoke') o.preset = 'smoke'
    else if (a === '--no-cluster') given.cluster = false
    else if (a === '--no-docs') given.docs = false
    else if (a === '--merge') given.merge = true
    else if (a === '--help' || a === '-h') o.help = true
    else if (map[a]) {
      const [key, conv] = map[a]
      given[key] = conv(v ?? argv[++i], a)
    } else throw new Error(`unknown flag ${a} (see --help)`)
  }
  const out = { ...o, ...PRESETS[o.preset], ...given, preset: o.preset }
  for (const [k, key] of [
    ['openloopOverload', 'Overload'],
    ['openloopRecover', 'Recover'],
    ['openloopContention', 'Contention'],
  ]) {
    if (!out[k]) continue
    out[`openloop${key}Rate`] = out[k].rate
    out[`openloop${key}S`] = out[k].seconds
    delete out[k]
  }
  return out
}
