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
    // vitest 4: top-level option (poolOptions.forks.* is gone). 2-core machine.
    maxWorkers: 2,
    sequence: { sequencer: SlowFirst },
  },
})
