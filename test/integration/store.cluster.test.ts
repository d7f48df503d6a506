import { defineStoreContract } from '../contract/store.contract.js'
import { clusterUrl } from '../helpers/redis.js'

defineStoreContract({ name: 'redis cluster', url: clusterUrl, layout: 'cluster' })
