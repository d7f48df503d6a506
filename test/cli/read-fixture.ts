/**
 * Live coordination state for the CLI's read side and the dashboard in a terminal, made by real replicas (RedisCoordinator,
 * RedisStore) — never by writing hashes by hand:
 * - pod-a holds chat:42 (pod-b queued behind), leads provider:whatsapp (pod-b standing by);
 * - pod-b holds scheduler:report; a fenced lock invoice:run; checkpoints on chat:42 (ephemeral,
 *   with a saved answer) and chat:9 (persistent); a handover marker on chat:7;
 * - pod-c held chat:7 and crashed; a new pod-c process (same replicaId, new incarnation) started:
 *   the old turn is held by a stale incarnation whose lease has not expired (chat:7 is stuck).
 */
import { RedisCoordinator, RedisStore, type Election, type Layout } from '../../src/index.js'
import { until } from '../helpers/wait.js'
import { untilBeatListsWaiting, untilQueued, untilStanding } from '../helpers/shared-state.js'

export interface LiveState {
  prefix: string
  a: RedisCoordinator
  b: RedisCoordinator
  /** pod-a's and pod-b's campaigns for provider:whatsapp */
  ea: Election
  eb: Election
  oldC: RedisCoordinator
  newC: RedisCoordinator
  fence42: number
  stop(): Promise<void>
}

export async function liveState(url: string, prefix: string, layout: Layout): Promise<LiveState> {
  const store = new RedisStore({ url, prefix, layout })
  const mk = (replicaId: string, leaseMs = 30_000) => new RedisCoordinator({ url, prefix, layout, replicaId, leaseMs })
  const a = mk('pod-a')
  const b = mk('pod-b')
  const oldC = mk('pod-c', 300_000) // its stale turn stays unexpired for the whole test file
  await Promise.all([a.start(), b.start(), oldC.start()])
  const t42 = await a.acquireTurn('chat:42')
  const waits = [b.acquireTurn('chat:42', { waitMs: 120_000 }).catch(() => null)]
  await oldC.acquireTurn('chat:7')
  waits.push(b.acquireTurn('chat:7', { waitMs: 120_000 }).catch(() => null))
  await (await a.acquireTurn('chat:9')).release()
  const ea = a.campaign('provider:whatsapp', {})
  await until(() => ea.isLeader, 5000, 'pod-a leading provider:whatsapp')
  const eb = b.campaign('provider:whatsapp', {})
  await b.tryLead('scheduler:report')
  await store.acquireLockFenced('invoice:run', 300_000) // held for the whole test file, however slow the machine
  await store.setCheckpointIf(
    'chat:42',
    {
      flow: 'order',
      step: 'address',
      state: { items: [1, 2] },
      owner: { replicaId: 'pod-a', incarnation: a.incarnation, fence: t42.fence },
      ephemeral: { ttlMs: 600_000, fingerprint: 'f1a2b3' },
      answer: { text: 'Calle 5' },
    },
    null,
  )
  await store.setCheckpointIf('chat:9', { flow: 'signup', step: 'email', state: { name: 'Ana' } }, null)
  await store.setHandoverMarker('chat:7', { name: 'survey', replicaId: 'pod-c', incarnation: oldC.incarnation, ttlMs: 600_000 })
  // b's tickets are queued and its candidacy recorded, and its heartbeat says it waits
  await untilQueued(a, 'chat:42', ['pod-b'])
  await untilQueued(a, 'chat:7', ['pod-b'])
  await untilStanding(a, 'provider:whatsapp', ['pod-b'])
  oldC.crash()
  const newC = mk('pod-c')
  await newC.start()
  // heartbeats carry the leases held and waited for
  await Promise.all([a.renewNow(), untilBeatListsWaiting(b, ['chat:42', 'chat:7'])])
  return {
    prefix,
    a,
    b,
    ea,
    eb,
    oldC,
    newC,
    fence42: t42.fence,
    async stop() {
      await eb.stop().catch(() => {})
      await ea.stop().catch(() => {})
      await Promise.all([a.stop(), b.stop(), newC.stop()].map((p) => p.catch(() => {})))
      await Promise.all(waits)
      await store.close()
    },
  }
}
