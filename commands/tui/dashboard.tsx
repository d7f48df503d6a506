/**
 * `runDashboard`: the live dashboard on this terminal, for `botmesh-coord watch` and the demo.
 * Resolves when the operator quits (q, Ctrl-C); the terminal is restored.
 */
import React from 'react'
import { loadIo, loadWriteSide, validatePrefix } from '../lib.js'
import { DashboardApp } from './dashboard-app.js'
import { renderFullScreen } from './render.js'
import { openSource } from './source.js'
import { safeSource } from './safe-source.js'
import { replaySource, type RecordingWriter } from './recording.js'

export interface RunDashboardOptions {
  url: string
  prefix: string
  /** The key layout (the CLI detects it when it opens its connection). */
  layout: 'standalone' | 'cluster'
  /** Refresh period in ms. Default 1000. */
  interval?: number
  /** y / r / s refused. Default: BOTMESH_READ_ONLY set. */
  readOnly?: boolean
  tlsCa?: string
  /** redis+sentinel://: the sentinels' own user and password, when they ask for one. */
  sentinelAuth?: { sentinelUsername?: string; sentinelPassword?: string }
  /** Log file of each replica (the demo's), listed in the help screen. */
  logFiles?: Record<string, string>
  /** Colours; default: on unless NO_COLOR is set. */
  color?: boolean
  /** How long one refresh may take. Default 5000 ms. */
  timeoutMs?: number
  /** `watch --record`: each refresh's raw records appended to this recording. */
  record?: RecordingWriter
  includeState?: boolean
  /** `watch --replay <file>` (or `--from <snapshot>`): play a recording instead of reading Redis. */
  replay?: { file: string; recording: Parameters<typeof replaySource>[2] }
}

export const DEFAULT_INTERVAL_MS = 1000

/** Colours are on unless --no-color or NO_COLOR (any value). */
export function colourEnabled(color: boolean | undefined): boolean {
  return color !== false && process.env.NO_COLOR === undefined
}

export function readOnlyFromEnv(): boolean {
  const v = process.env.BOTMESH_READ_ONLY
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false'
}

export async function runDashboard(options: RunDashboardOptions): Promise<void> {
  const prefix = validatePrefix(options.prefix)
  const interval = options.interval ?? DEFAULT_INTERVAL_MS
  if (!Number.isFinite(interval) || interval < 100) throw new RangeError('interval must be at least 100 ms')
  const replay = options.replay ? replaySource(await loadIo(), options.replay.file, options.replay.recording) : null
  const source = safeSource(
    replay ??
      openSource({
        io: await loadIo(),
        write: await loadWriteSide(),
        url: options.url,
        prefix,
        layout: options.layout,
        tlsCa: options.tlsCa,
        sentinelAuth: options.sentinelAuth,
        timeoutMs: options.timeoutMs,
        record: options.record,
        includeState: options.includeState,
      }),
  )
  try {
    await renderFullScreen(
      <DashboardApp
        source={source}
        player={replay?.controls}
        intervalMs={interval}
        readOnly={options.readOnly ?? readOnlyFromEnv()}
        colour={colourEnabled(options.color)}
        logFiles={options.logFiles}
      />,
    )
  } finally {
    await source.close()
  }
}
