/**
 * `watch --record <file>` and `watch --replay <file>`. A recording is JSON lines: a header, then one
 * line per refresh with the raw records that refresh read (and the chat details opened meanwhile) —
 * what `RecordingSource` kept. Replayed, each line answers the dashboard's reads through
 * `RecordedSource`: the same readDashboard, the same screen. The player moves through the refreshes
 * at the recorded pace times `speed`, pauses, steps, and jumps to a time.
 *
 * This module holds the replay source and re-exports the rest, so importers need only it:
 * recording-format.ts (the format and RecordingWriter), recording-reader.ts (readRecording, the
 * refreshes) and replay-player.ts (Player).
 */
import { KeyLayout, type ChatDetail, type DashboardSnapshot, type Io } from '../lib.js'
import { refused } from '../output/errors.js'
import type { DashboardSource } from './source.js'
import type { Interventions } from './interventions.js'
import type { ReplayControls } from './dashboard-app.js'
import type { RecordingHeader } from './recording-format.js'
import type { Refreshes } from './recording-reader.js'
import { Player } from './replay-player.js'

export * from './recording-format.js'
export * from './recording-reader.js'
export * from './replay-player.js'

const NOT_LIVE = (what: string) =>
  Promise.reject(refused(`a recording cannot be changed: ${what} needs a live Redis (watch without --replay)`))

/** The dashboard's source over a recording: each read answers from the refresh the player stands on. */
export function replaySource(
  io: Io,
  file: string,
  recording: { header: Pick<RecordingHeader, 'target'>; refreshes: Refreshes },
  o: { topChats?: number; now?: () => number } = {},
): DashboardSource & { player: Player; controls: ReplayControls } {
  const { header, refreshes } = recording
  const keys = new KeyLayout(header.target.prefix, header.target.layout)
  const player = new Player(refreshes, o.now)
  const readerAt = () => new io.StateReader(new io.RecordedSource(player.at.records), keys)
  const interventions: Interventions = {
    yieldProvider: () => NOT_LIVE('yield'),
    releaseChat: () => NOT_LIVE('release'),
    skipTicket: () => NOT_LIVE('skip'),
    removeHandover: () => NOT_LIVE('removing a marker'),
    extendCheckpoint: () => NOT_LIVE('extending a checkpoint'),
  }
  return {
    url: `${file} (recorded from ${header.target.url})`,
    prefix: header.target.prefix,
    layout: header.target.layout,
    player,
    controls: {
      describe: () => player.describe(file),
      toggle: () => player.toggle(),
      step: (by) => player.step(by),
      faster: (f) => player.faster(f),
      jumpBy: (ms) => player.jumpBy(ms),
      jumpToClock: (t) => player.jumpToClock(t),
    },
    read: (): Promise<DashboardSnapshot> => {
      player.tick()
      return io.readDashboard(readerAt(), { topChats: o.topChats })
    },
    chat: (key: string): Promise<ChatDetail> => readerAt().chat(key),
    commandsTotal: () => 0,
    status: () => 'replay',
    interventions,
    close: async () => {},
  }
}
