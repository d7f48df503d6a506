/**
 * `snapshot -o <file>` written as the capture reads it: the JSON document goes out piece by piece
 * (through gzip when the name ends in .gz) into a temporary file beside the target, mode 0600,
 * renamed over it once whole — a capture that fails leaves nothing. Memory holds the batch of
 * records being written (the capture reads a few ahead) and the key names (as JSON text), not the
 * snapshot: a million chats are not one string.
 *
 * The document is the snapshot format decodeSnapshot reads (src/state/snapshot.ts), in this order:
 * the head, the records' hashes as they come, the masters with their keys, and the capture last.
 */
import { createWriteStream, renameSync, unlinkSync, type WriteStream } from 'node:fs'
import { once } from 'node:events'
import { basename, dirname, join } from 'node:path'
import { createGzip, type Gzip } from 'node:zlib'
import type { HashRecord, NodeRecord, Snapshot, SnapshotHead, SnapshotSink } from '../lib-io.js'
import { CliError } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'

/** The error a write of `-o <path>` ends with: one line, exit 2. */
export function cannotWrite(path: string, err: unknown): CliError {
  const code = (err as NodeJS.ErrnoException).code
  return new CliError(
    `-o ${path}: cannot write it: ${code === 'EACCES' ? 'permission denied' : code === 'ENOENT' ? 'no such directory' : String(code ?? err)}`,
    EXIT.usage,
  )
}

export class SnapshotFileWriter implements SnapshotSink {
  /** Bytes of JSON written (before gzip). */
  jsonBytes = 0
  private readonly tmp: string
  private readonly file: WriteStream
  private readonly out: Gzip | WriteStream
  private failed: unknown = null
  private firstHash = true
  /** Each master's key names, as pieces of a JSON array's text. */
  private readonly keyText: string[][] = []

  constructor(
    private readonly path: string,
    gzip: boolean,
  ) {
    this.tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`)
    this.file = createWriteStream(this.tmp, { mode: 0o600, flags: 'wx' })
    this.file.on('error', (err) => (this.failed ??= err))
    if (gzip) {
      // The fastest level: a capture runs during an incident, on a host Redis may share (the file
      // is about 40% larger than at the default level).
      const z = createGzip({ level: 1 })
      z.on('error', (err) => (this.failed ??= err))
      z.pipe(this.file)
      this.out = z
    } else this.out = this.file
  }

  private async write(text: string): Promise<void> {
    if (this.failed) throw cannotWrite(this.path, this.failed)
    this.jsonBytes += Buffer.byteLength(text)
    if (!this.out.write(text)) await this.drained()
  }

  /**
   * Until the stream takes more (drain) or the file fails. Both waits are taken off the streams
   * once one of them ends: a capture of a million keys waits thousands of times.
   */
  private async drained(): Promise<void> {
    const stop = new AbortController()
    const waits = [once(this.out, 'drain', { signal: stop.signal }), once(this.file, 'error', { signal: stop.signal })]
    for (const w of waits) w.catch(() => {}) // the one left waiting is aborted below
    try {
      await Promise.race(waits)
    } catch {
      // the stream failed: its 'error' listener kept the cause
    } finally {
      stop.abort()
    }
    if (this.failed) throw cannotWrite(this.path, this.failed)
  }

  async start(head: SnapshotHead): Promise<void> {
    const { records, ...rest } = head
    await this.write(`${JSON.stringify(rest).slice(0, -1)},"records":${JSON.stringify(records).slice(0, -1)},"hashes":{`)
  }

  async hashes(records: Array<[string, HashRecord]>): Promise<void> {
    if (!records.length) return
    const text = records.map(([k, r]) => `${JSON.stringify(k)}:${JSON.stringify(r)}`).join(',')
    await this.write(this.firstHash ? text : `,${text}`)
    this.firstHash = false
  }

  nodeKeys(node: number, names: string[]): void {
    if (names.length) (this.keyText[node] ??= []).push(JSON.stringify(names).slice(1, -1))
  }

  async finish(nodes: NodeRecord[], capture: Snapshot['capture']): Promise<void> {
    const masters = nodes.map((n, i) => `${JSON.stringify({ ...n, keys: [] }).slice(0, -3)}[${(this.keyText[i] ?? []).join(',')}]}`)
    await this.write(`},"nodes":[${masters.join(',')}]},"capture":${JSON.stringify(capture)}}`)
    this.out.end()
    await once(this.file, 'close').catch(() => {})
    if (this.failed) throw cannotWrite(this.path, this.failed)
    try {
      renameSync(this.tmp, this.path)
    } catch (err) {
      this.discard()
      throw cannotWrite(this.path, err)
    }
  }

  /** The capture failed: no file is left behind. */
  discard(): void {
    this.file.destroy()
    try {
      unlinkSync(this.tmp)
    } catch {
      /* nothing was written */
    }
  }
}
