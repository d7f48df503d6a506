/**
 * The library's write side for the CLI: operator interventions (CoordinationAdmin) and the store.
 * Imported only through `loadWriteSide()` in ./lib.ts: reads never load the coordinator's code.
 */
export { CoordinationAdmin } from '../src/admin/admin.js'
export { RedisStore } from '../src/store/redis-store.js'
