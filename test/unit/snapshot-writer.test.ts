/**
 * `snapshot -o` writes its file as the capture reads it, waiting for the stream whenever it is
 * full: every wait is taken off the streams again, so a large capture (thousands of waits) leaves
 * no listeners behind and Node prints no MaxListenersExceededWarning on the operator's terminal.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { SnapshotFileWriter } from '../../commands/snapshot/writer.js'

const warnings: Error[] = []
const onWarning = (w: Error) => warnings.push(w)
afterEach(() => {
  process.off('warning', onWarning)
})

describe('SnapshotFileWriter', () => {
  it('waits for the stream many times without leaving a listener behind', async () => {
    process.on('warning', onWarning)
    const path = join(mkdtempSync(join(tmpdir(), 'botmesh-writer-')), 'big.json.gz')
    const w = new SnapshotFileWriter(path, true)
    await w.start({ version: 1, records: { hashes: 'by key' } } as never)
    // Incompressible values, so that gzip's buffer fills and every batch waits for 'drain'.
    let seed = 1
    const noise = () => {
      let s = ''
      for (let i = 0; i < 4000; i++) s += String.fromCharCode(33 + ((seed = (seed * 1103515245 + 12345) % 2147483648) % 90))
      return s
    }
    const batches = 40
    for (let b = 0; b < batches; b++) {
      await w.hashes(Array.from({ length: 20 }, (_, i) => [`k:${b}:${i}`, { v: noise() } as never]))
    }
    await w.finish([], {} as never)
    await new Promise((r) => setImmediate(r)) // warnings are emitted on a later tick
    expect(warnings.filter((x) => x.name === 'MaxListenersExceededWarning')).toEqual([])
    const doc = JSON.parse(gunzipSync(readFileSync(path)).toString()) as { records: { hashes: Record<string, unknown> } }
    expect(Object.keys(doc.records.hashes)).toHaveLength(batches * 20)
  })
})
