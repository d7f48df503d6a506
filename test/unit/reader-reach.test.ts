/**
 * A listing on a Cluster with a master down, in-process and with no Redis: a RecordedSource that
 * knows the slot owners and whose scan of one master fails. The walk notes the master and reads the
 * others (with and without --limit), StateReader.unreachable() names it with its slots, and a failure
 * that is not a master gone still fails the listing.
 */
import { describe, expect, it } from 'vitest'
import { KeyLayout } from '../../src/keys.js'
import { keyText } from '../../src/bytes.js'
import { StateReader, LISTING_DECODERS } from '../../src/state/reader.js'
import { RecordedSource, emptyRecords, type StateRecords } from '../../src/state/records.js'
import type { SlotOwner } from '../../src/state/coverage.js'
import { CoordinationUnavailableError } from '../../src/errors/coordination-unavailable-error.js'

const NOW = 1_700_000_000_000
const keys = new KeyLayout('shop', 'cluster')
const NODES = ['10.0.0.1:6379', '10.0.0.2:6379', '10.0.0.3:6379']
const OWNERS: SlotOwner[] = [
  { node: NODES[0]!, ranges: [[0, 5460]] },
  { node: NODES[1]!, ranges: [[5461, 10922]] },
  { node: NODES[2]!, ranges: [[10923, 16383]] },
]

/** Three masters, `perNode` chats on each. */
function records(perNode: number): StateRecords {
  const recs = emptyRecords(
    NOW,
    NODES.map((name) => ({ name, keys: [] as string[] })),
  )
  NODES.forEach((_, n) => {
    for (let i = 0; i < perNode; i++) {
      const text = keyText(keys.chat(`n${n}-${i}`).state)
      recs.hashes[text] = { h: { f: String(i + 1) }, at: NOW }
      ;(recs.nodes[n]!.keys as string[]).push(text)
    }
  })
  return recs
}

/** Answers as a Cluster does: slot owners known; the scan of master `down` fails with `error`. */
class ClusterRecords extends RecordedSource {
  constructor(
    recs: StateRecords,
    private readonly down: number | null,
    private readonly error: Error = new CoordinationUnavailableError('unreachable', 'Redis unreachable: connect ECONNREFUSED'),
    private readonly heartbeatSlot = 0,
  ) {
    super(recs)
  }
  slotOwners = (): Promise<SlotOwner[] | null> => Promise.resolve(OWNERS)
  keySlot = (): Promise<number | null> => Promise.resolve(this.heartbeatSlot)
  override scan(node: number, cursor: string, pattern: string, count: number) {
    if (node === this.down) return Promise.reject(this.error)
    return super.scan(node, cursor, pattern, count)
  }
}

const chatKeys = (items: Array<{ key: string }>) => items.map((c) => c.key).sort()

describe('a listing with a Cluster master down (in-process)', () => {
  it('without a limit: the other masters are read, and unreachable() names the one that failed, with its slots', async () => {
    const reader = new StateReader(new ClusterRecords(records(3), 1), keys)
    expect(await reader.unreachable()).toEqual([])
    const chats = await reader.chats({ count: 2 })
    expect(chatKeys(chats.items)).toEqual(['n0-0', 'n0-1', 'n0-2', 'n2-0', 'n2-1', 'n2-2'])
    expect(chats).toMatchObject({ scanned: 6, truncated: false, corrupt: [] })
    expect(await reader.unreachable()).toEqual([{ node: NODES[1], slots: '5461-10922', error: 'connect ECONNREFUSED' }])
    // The heartbeats' slot is on a master that answered: the replica listing is whole.
    expect(await reader.unreachable('replica')).toEqual([])
  })

  it("unreachable('replica') keeps the master down when it owns the heartbeats' slot", async () => {
    const reader = new StateReader(new ClusterRecords(records(2), 1, undefined, 6000), keys)
    await reader.listMany({ chat: LISTING_DECODERS.chat, lead: LISTING_DECODERS.lead })
    expect((await reader.unreachable('replica')).map((m) => m.node)).toEqual([NODES[1]])
  })

  it('with a limit: master after master, the one down skipped and named', async () => {
    const reader = new StateReader(new ClusterRecords(records(3), 0), keys)
    const chats = await reader.chats({ count: 1, limit: 100 })
    expect(chatKeys(chats.items)).toEqual(['n1-0', 'n1-1', 'n1-2', 'n2-0', 'n2-1', 'n2-2'])
    expect(chats).toMatchObject({ scanned: 6, truncated: false })
    expect((await reader.unreachable()).map((m) => [m.node, m.slots])).toEqual([[NODES[0], '0-5460']])
  })

  it('a limit reached before the last master: only the masters that failed are named, not those left unread', async () => {
    const reader = new StateReader(new ClusterRecords(records(3), 0), keys)
    const chats = await reader.chats({ count: 1, limit: 2 })
    expect(chats).toMatchObject({ scanned: 2, truncated: true })
    expect((await reader.unreachable()).map((m) => m.node)).toEqual([NODES[0]])
  })

  it('every master read: nothing is unreachable', async () => {
    const reader = new StateReader(new ClusterRecords(records(2), null), keys)
    expect((await reader.chats()).items).toHaveLength(6)
    expect(await reader.unreachable()).toEqual([])
  })

  it('an error that is not a master gone fails the listing', async () => {
    const reader = new StateReader(new ClusterRecords(records(2), 2, new Error('ERR unknown command')), keys)
    await expect(reader.chats()).rejects.toThrow(/unknown command/)
    const limited = new StateReader(new ClusterRecords(records(2), 2, new Error('ERR unknown command')), keys)
    await expect(limited.chats({ limit: 100 })).rejects.toThrow(/unknown command/)
  })

  it('on a source without slot owners (standalone, a snapshot) a master gone fails the listing', async () => {
    const source = new ClusterRecords(records(1), 0)
    Object.assign(source, { slotOwners: undefined, keySlot: undefined })
    const reader = new StateReader(source, keys)
    await expect(reader.chats()).rejects.toThrow(/ECONNREFUSED/)
    expect(await reader.unreachable()).toEqual([])
  })
})
