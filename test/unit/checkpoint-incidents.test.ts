/**
 * The checkpoint incident rules (src/state/checkpoint-incidents.ts), on decoded snapshots: a write
 * from outside the chat's turn, and an ephemeral checkpoint of a flow version not deployed.
 */
import { describe, expect, it } from 'vitest'
import { fingerprintMismatch, fingerprintsByFlow, staleCheckpointWrite } from '../../src/state/checkpoint-incidents.js'
import { FENCE, NOW, chatState, checkpoint, holder, incarnationOf } from '../helpers/snapshots.js'

const by = (replicaId: string, fence: number | null) => ({ replicaId, incarnation: incarnationOf(replicaId), fence })

describe('staleCheckpointWrite', () => {
  const held = chatState('chat:1', { holder: holder('pod-a', { heldForMs: 5000 }), fence: FENCE })

  it('leaves alone what the holder wrote under its fence, and what the previous holder wrote before the grant', () => {
    expect(staleCheckpointWrite(held, checkpoint('chat:1', 'pod-a', { updatedAt: NOW - 1000 }))).toBeNull()
    const before = checkpoint('chat:1', 'pod-b', { owner: by('pod-b', FENCE - 5), updatedAt: NOW - 9000 })
    expect(staleCheckpointWrite(held, before)).toBeNull()
    expect(staleCheckpointWrite(null, before)).toBeNull()
    expect(staleCheckpointWrite(held, checkpoint('chat:1', 'pod-a', { owner: null }))).toBeNull()
  })

  it('flags a write by another replica after the grant, fenced or not', () => {
    const w = staleCheckpointWrite(held, checkpoint('chat:1', 'pod-b', { owner: by('pod-b', null), updatedAt: NOW - 1000 }))
    expect(w).toMatchObject({ reason: 'another-holder', replicaId: 'pod-b', fence: null, chatFence: FENCE })
    expect(w!.fix).toBe('botmesh-coord checkpoint rm chat:1 --if-revision 1700000000000777')
  })

  it('flags a write under an older fence after a newer grant, even by the same process', () => {
    const w = staleCheckpointWrite(held, checkpoint('chat:1', 'pod-a', { owner: by('pod-a', FENCE - 3), updatedAt: NOW - 1000 }))
    expect(w).toMatchObject({ reason: 'older-fence' })
    expect(w!.message).toContain(`under fence ${FENCE - 3}, a fence older than the turn's ${FENCE}`)
  })

  it('flags an unfenced write by a replica that held none of the remembered turns; not one by a last holder', () => {
    const idle = chatState('chat:2', {
      lastHolder: { replicaId: 'pod-a', incarnation: incarnationOf('pod-a') },
      previousHolder: { replicaId: 'pod-c', incarnation: incarnationOf('pod-c') },
    })
    expect(staleCheckpointWrite(idle, checkpoint('chat:2', 'pod-b', { owner: by('pod-b', null) }))).toMatchObject({
      reason: 'not-a-holder',
    })
    expect(staleCheckpointWrite(idle, checkpoint('chat:2', 'pod-c', { owner: by('pod-c', null) }))).toBeNull()
    // Another incarnation of a last holder is another process.
    const restarted = checkpoint('chat:2', 'pod-a', { owner: { replicaId: 'pod-a', incarnation: 'other', fence: null } })
    expect(staleCheckpointWrite(idle, restarted)).toMatchObject({ reason: 'not-a-holder' })
    // A fenced write is judged by its fence, not by who wrote it.
    expect(staleCheckpointWrite(idle, checkpoint('chat:2', 'pod-b', { owner: by('pod-b', FENCE) }))).toBeNull()
  })
})

describe('fingerprints', () => {
  it('a mismatch only for an ephemeral checkpoint of a flow given, with another fingerprint', () => {
    const eph = checkpoint('chat:1', 'pod-a', { flow: 'faq', ephemeral: { ttlMs: 1000, fingerprint: 'v1' } })
    expect(fingerprintMismatch(eph, { faq: 'v2' })).toEqual({
      key: 'chat:1',
      flow: 'faq',
      revision: eph.revision,
      fingerprint: 'v1',
      deployed: 'v2',
      fallback: 'changed',
    })
    expect(fingerprintMismatch(eph, { faq: 'v1' })).toBeNull()
    expect(fingerprintMismatch(eph, { order: 'v2' })).toBeNull()
    expect(fingerprintMismatch({ ...eph, ephemeral: null }, { faq: 'v2' })).toBeNull()
    expect(fingerprintMismatch({ ...eph, flow: 'constructor' }, {})).toBeNull()
  })

  it('counts the versions of each flow among ephemeral checkpoints', () => {
    const at = (fp: string) => checkpoint('k', 'pod-a', { flow: 'faq', ephemeral: { ttlMs: 1, fingerprint: fp } })
    const m = fingerprintsByFlow([at('v1'), at('v1'), at('v2'), checkpoint('p', 'pod-a', { ephemeral: null })])
    expect([...m.get('faq')!]).toEqual([
      ['v1', 2],
      ['v2', 1],
    ])
    expect(m.has('order')).toBe(false)
  })
})
