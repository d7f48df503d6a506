import { defineConfig } from 'vitest/config'
import { SlowFirst } from './test/setup/sequencer.js'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    globalSetup: ['test/setup/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    // vitest 4: top-level option (poolOptions.forks.* is gone). Three on a 2-core machine: the tests
    // spend a quarter of their time waiting on Redis, timers and the CLI's processes, and with two
    // workers the cores sat idle for it (595 s with two, 490 s with three, the same CPU time).
    maxWorkers: 3,
    sequence: { sequencer: SlowFirst },
  },
})
