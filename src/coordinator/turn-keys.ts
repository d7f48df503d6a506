import type { KeyLayout, RedisKey } from '../keys.js'

/** Chats whose turn keys are kept made (past it, all are forgotten and made again as they come). */
const KEPT = 4096

/**
 * Recent chats' state and queue keys. A turn names them in its take and its release (and each
 * renewal of it once more), and KeyLayout.chat checks and escapes the chat's id and makes all four
 * of its key names each time: about 1.4 KB of garbage per turn, made again for the same chat.
 */
export class TurnKeys {
  private readonly made = new Map<string, { state: RedisKey; queue: RedisKey }>()

  constructor(private readonly keys: KeyLayout) {}

  /** The chat's state and queue keys; an id KeyLayout refuses throws, every time it is asked. */
  of(chat: string): { state: RedisKey; queue: RedisKey } {
    let k = this.made.get(chat)
    if (!k) {
      const { state, queue } = this.keys.chat(chat)
      if (this.made.size >= KEPT) this.made.clear()
      this.made.set(chat, (k = { state, queue }))
    }
    return k
  }
}
