// Types of the parts of ./stats.js that tests use (plain JavaScript, so that bench/ runs without a build).
export declare const RANGED: string[]
export declare function aggregateRuns<T extends Record<string, unknown>>(
  runs: T[],
): Record<string, unknown> & { repeats: number; range?: Record<string, [number, number]>; runs?: unknown[] }
