import { defineStoreContract } from '../contract/store.contract.js'
import { redisStoreHarness } from '../contract/redis-store-harness.js'
import { clusterUrl } from '../helpers/redis.js'

defineStoreContract(redisStoreHarness('redis cluster', clusterUrl, 'cluster'))
