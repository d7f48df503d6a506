/** The last N samples, for quantiles reported in the heartbeat (no per-message Redis write). */
export class LatencyWindow {
  private readonly samples: number[] = []
  private next = 0
  constructor(private readonly size: number) {}

  add(ms: number): void {
    if (this.samples.length < this.size) this.samples.push(ms)
    else {
      this.samples[this.next] = ms
      this.next = (this.next + 1) % this.size
    }
  }

  quantile(q: number): number | null {
    if (this.samples.length === 0) return null
    const sorted = [...this.samples].sort((a, b) => a - b)
    return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!)
  }
}
