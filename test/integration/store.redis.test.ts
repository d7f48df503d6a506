import { defineStoreContract } from '../contract/store.contract.js'
import { redisStoreHarness } from '../contract/redis-store-harness.js'
import { redisUrl } from '../helpers/redis.js'

defineStoreContract(redisStoreHarness('redis standalone', redisUrl, 'standalone'))
