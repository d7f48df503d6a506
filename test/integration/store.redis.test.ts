import { defineStoreContract } from '../contract/store.contract.js'
import { redisUrl } from '../helpers/redis.js'

defineStoreContract({ name: 'redis standalone', url: redisUrl, layout: 'standalone' })
