/**
 * What a recording is on disk (`watch --record`): a header line, then one JSON line per refresh, and
 * the writer that makes it. Split from recording.ts: the write side, which the reader and the player
 * follow.
 */
import { closeSync, openSync, writeSync } from 'node:fs'
import { PACKAGE_VERSION, maskUrl, type StateRecords } from '../lib.js'
import { CliError } from '../output/errors.js'
import { EXIT } from '../output/exit-codes.js'

export const RECORDING_FORMAT = 'botmesh-coord-recording'

export interface RecordingHeader {
  format: typeof RECORDING_FORMAT
  formatVersion: 1
  tool: string
  target: { url: string; prefix: string; layout: 'standalone' | 'cluster' }
  includeState: boolean
}

export interface RecordedRefresh {
  /** Redis's clock of the refresh (ms). */
  t: number
  seq: number
  records: StateRecords
}

/** A recording being written: created with mode 0600 (an existing file is refused), one line per refresh. */
export class RecordingWriter {
  private readonly fd: number
  private seq = 0

  constructor(
    readonly file: string,
    header: Omit<RecordingHeader, 'format' | 'formatVersion' | 'tool'>,
  ) {
    try {
      this.fd = openSync(file, 'wx', 0o600)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      throw new CliError(
        `--record ${file}: ${code === 'EEXIST' ? 'the file exists (a recording is never overwritten): pick another name' : `cannot create it: ${String(code ?? err)}`}`,
        EXIT.usage,
      )
    }
    const h: RecordingHeader = {
      format: RECORDING_FORMAT,
      formatVersion: 1,
      tool: `botmesh-coord ${PACKAGE_VERSION}`,
      ...header,
      target: { ...header.target, url: maskUrl(header.target.url) },
    }
    writeSync(this.fd, `${JSON.stringify(h)}\n`)
  }

  write(records: StateRecords): void {
    if (!records.nowMs) return
    writeSync(this.fd, `${JSON.stringify({ t: records.nowMs, seq: ++this.seq, records } satisfies RecordedRefresh)}\n`)
  }

  close(): void {
    closeSync(this.fd)
  }
}
