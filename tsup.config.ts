import { defineConfig } from 'tsup'

// One build for the library (src/) and the CLI (commands/). The Lua scripts are not bundled:
// they ship as files in lua/ and are read at run time relative to the package root.
export default defineConfig({
  entry: {
    'src/index': 'src/index.ts',
    'src/testing/index': 'src/testing/index.ts',
    'commands/cli': 'commands/cli.ts',
    // The demo's replica program runs as its own process (one per replica).
    'commands/demo/replica': 'commands/demo/replica.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { 'src/index': 'src/index.ts', 'src/testing/index': 'src/testing/index.ts' } },
  sourcemap: true,
  clean: false, // several test runs may share dist/ while one rebuilds
  splitting: true,
  outDir: 'dist',
})
