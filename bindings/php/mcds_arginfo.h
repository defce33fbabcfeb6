/* This is a generated file, edit the .stub.php file instead.
 * Stub hash: 61e59275648945f4d3c926958649ae76c4a206df */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_Mcds_version, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_Store___construct, 0, 0, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_memcached, 0, 1, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, servers, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, connectTimeout, IS_DOUBLE, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ioTimeout, IS_DOUBLE, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, itemSizeLimit, IS_LONG, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, persistentId, IS_STRING, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_memory, 0, 0, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, memoryLimit, IS_LONG, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, evict, _IS_BOOL, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, itemSizeLimit, IS_LONG, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, persistentId, IS_STRING, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_fromUrl, 0, 1, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, url, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, persistentId, IS_STRING, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_fromConfig, 0, 0, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, persistentId, IS_STRING, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Store_isPersistent, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_withPrefix, 0, 1, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, prefix, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Store_update, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, fn, IS_CALLABLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, maxAttempts, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_kv, 0, 0, Mcds\\KeyValue, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_counter, 0, 1, Mcds\\Counter, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_counterMap, 0, 1, Mcds\\CounterMap, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, scale, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_lock, 0, 1, Mcds\\Lock, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 0, "30.0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, fencing, _IS_BOOL, 0, "false")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ownerLabel, IS_STRING, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, backoffMin, IS_DOUBLE, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, backoffMax, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_shadowCounter, 0, 2, Mcds\\ShadowCounter, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, periodSeconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_viewCounter, 0, 2, Mcds\\ViewCounter, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, loader, IS_CALLABLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_set, 0, 1, Mcds\\Set, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_shardedSet, 0, 2, Mcds\\ShardedSet, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, shards, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_intArray, 0, 1, Mcds\\IntArray, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_windowCounter, 0, 3, Mcds\\WindowCounter, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, slotSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, slots, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_rateLimiter, 0, 3, Mcds\\RateLimiter, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, limit, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, windowSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, sliding, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_eventLog, 0, 3, Mcds\\EventLog, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, chunkSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, chunks, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_table, 0, 1, Mcds\\Table, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_hyperLogLog, 0, 1, Mcds\\HyperLogLog, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_bloomFilter, 0, 3, Mcds\\BloomFilter, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, expectedItems, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, falsePositiveRate, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_activityBitmap, 0, 3, Mcds\\ActivityBitmap, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, startUnixSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, unitMilliseconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_timeSeries, 0, 2, Mcds\\TimeSeries, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, resolutions, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_packedSeries, 0, 5, Mcds\\PackedSeries, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, slotMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, slotsPerPeriod, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, width, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, retentionMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_leaderboard, 0, 2, Mcds\\Leaderboard, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, capacity, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Store_scalableBloomFilter, 0, 3, Mcds\\ScalableBloomFilter, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, initialCapacity, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, errorRate, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_Counter___construct, 0, 0, 2)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Counter_withKey, 0, 2, Mcds\\Counter, 0)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_Mcds_Counter_incr, 0, 0, MAY_BE_LONG|MAY_BE_STRING)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, delta, IS_LONG, 0, "1")
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Counter_decr arginfo_class_Mcds_Counter_incr

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_Mcds_Counter_get, 0, 0, MAY_BE_LONG|MAY_BE_STRING)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Counter_reset, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Counter_incrMany, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, increments, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Counter_withTtl, 0, 1, Mcds\\Counter, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_ShadowCounter___construct, 0, 0, 3)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, periodSeconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_ShadowCounter_incr arginfo_class_Mcds_Counter_incr

#define arginfo_class_Mcds_ShadowCounter_value arginfo_class_Mcds_Counter_get

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_ViewCounter___construct, 0, 0, 3)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, loader, IS_CALLABLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_ViewCounter_view arginfo_class_Mcds_Counter_incr

#define arginfo_class_Mcds_ViewCounter_get arginfo_class_Mcds_Counter_get

#define arginfo_class_Mcds_ViewCounter_invalidate arginfo_class_Mcds_Counter_reset

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_Lock___construct, 0, 0, 2)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 0, "30.0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, fencing, _IS_BOOL, 0, "false")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ownerLabel, IS_STRING, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, backoffMin, IS_DOUBLE, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, backoffMax, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Lock_withKey, 0, 2, Mcds\\Lock, 0)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 0, "30.0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, fencing, _IS_BOOL, 0, "false")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ownerLabel, IS_STRING, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, backoffMin, IS_DOUBLE, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, backoffMax, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Lock_acquire, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, blocking, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Lock_acquireWithin, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, timeout, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Lock_refresh, 0, 0, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Lock_autoExtend arginfo_class_Mcds_Lock_refresh

#define arginfo_class_Mcds_Lock_isLost arginfo_class_Mcds_Store_isPersistent

#define arginfo_class_Mcds_Lock_isAcquired arginfo_class_Mcds_Store_isPersistent

#define arginfo_class_Mcds_Lock_getFencingToken arginfo_class_Mcds_Counter_get

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Lock_getHolder, 0, 0, IS_STRING, 1)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Lock_getOwnerToken arginfo_class_Mcds_Lock_getHolder

#define arginfo_class_Mcds_Lock_release arginfo_class_Mcds_Store_isPersistent

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Lock_synchronized, 0, 1, IS_MIXED, 0)
	ZEND_ARG_TYPE_INFO(0, callback, IS_CALLABLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, timeout, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Lock_getName arginfo_Mcds_version

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Lock_getTtl, 0, 0, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Set___construct arginfo_class_Mcds_Counter___construct

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Set_add, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, member, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Set_remove arginfo_class_Mcds_Set_add

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Set_addMany, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, members, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Set_removeMany arginfo_class_Mcds_Set_addMany

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Set_contains, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, member, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Set_members, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Set_compact arginfo_class_Mcds_Store_isPersistent

#define arginfo_class_Mcds_Set_clear arginfo_class_Mcds_Counter_reset

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Set_withTtl, 0, 1, Mcds\\Set, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_ShardedSet___construct, 0, 0, 3)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, shards, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_ShardedSet_add arginfo_class_Mcds_Set_add

#define arginfo_class_Mcds_ShardedSet_remove arginfo_class_Mcds_Set_add

#define arginfo_class_Mcds_ShardedSet_addMany arginfo_class_Mcds_Set_addMany

#define arginfo_class_Mcds_ShardedSet_removeMany arginfo_class_Mcds_Set_addMany

#define arginfo_class_Mcds_ShardedSet_contains arginfo_class_Mcds_Set_contains

#define arginfo_class_Mcds_ShardedSet_members arginfo_class_Mcds_Set_members

#define arginfo_class_Mcds_ShardedSet_compact arginfo_class_Mcds_Counter_reset

#define arginfo_class_Mcds_ShardedSet_clear arginfo_class_Mcds_Counter_reset

#define arginfo_class_Mcds_IntArray___construct arginfo_class_Mcds_Counter___construct

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_IntArray_add, 0, 0, IS_VOID, 0)
	ZEND_ARG_VARIADIC_TYPE_INFO(0, values, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_IntArray_remove arginfo_class_Mcds_IntArray_add

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_IntArray_contains, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_IntArray_members arginfo_class_Mcds_Set_members

#define arginfo_class_Mcds_IntArray_clear arginfo_class_Mcds_Counter_reset

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_CounterMap___construct, 0, 0, 2)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, scale, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_CounterMap_withScale, 0, 1, Mcds\\CounterMap, 0)
	ZEND_ARG_TYPE_INFO(0, places, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_CounterMap_name arginfo_Mcds_version

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_CounterMap_scale, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_CounterMap_registryKey arginfo_Mcds_version

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_CounterMap_fieldKey, 0, 1, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, field, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_CounterMap_incr, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, field, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, by, IS_LONG, 0, "1")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_CounterMap_incrDecimal, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, field, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, amount, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_CounterMap_incrF64, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, field, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, amount, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_CounterMap_get, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, field, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_CounterMap_getDecimal arginfo_class_Mcds_CounterMap_fieldKey

#define arginfo_class_Mcds_CounterMap_getAll arginfo_class_Mcds_Set_members

#define arginfo_class_Mcds_CounterMap_getAllDecimal arginfo_class_Mcds_Set_members

#define arginfo_class_Mcds_CounterMap_fields arginfo_class_Mcds_Set_members

#define arginfo_class_Mcds_CounterMap_len arginfo_class_Mcds_CounterMap_scale

#define arginfo_class_Mcds_CounterMap_isEmpty arginfo_class_Mcds_Store_isPersistent

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_CounterMap_remove, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, field, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_WindowCounter___construct, 0, 0, 4)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, slotSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, slots, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_WindowCounter_incr arginfo_class_Mcds_Counter_incr

#define arginfo_class_Mcds_WindowCounter_value arginfo_class_Mcds_Counter_get

#define arginfo_class_Mcds_Decision___construct arginfo_class_Mcds_Store___construct

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_RateLimiter___construct, 0, 0, 4)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, limit, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, windowSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, sliding, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_RateLimiter_check, 0, 0, Mcds\\Decision, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_RateLimiter_peek arginfo_class_Mcds_RateLimiter_check

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_EventLog___construct, 0, 0, 4)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, chunkSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, chunks, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_EventLog_put, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, payload, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_EventLog_putAt, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, atMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, payload, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_EventLog_fetch, 0, 2, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, firstMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, lastMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_EventLog_since, 0, 0, IS_ARRAY, 0)
	ZEND_ARG_OBJ_INFO_WITH_DEFAULT_VALUE(0, cursor, Mcds\\Cursor, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_Cursor___construct, 0, 0, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, atMs, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, seenAtMs, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Cursor_after, 0, 1, Mcds\\Cursor, 0)
	ZEND_ARG_TYPE_INFO(0, atMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_KeyValue___construct, 0, 0, 1)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_KeyValue_get, 0, 1, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_KeyValue_set, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_KeyValue_add, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_KeyValue_delete, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_Mcds_KeyValue_incr, 0, 1, MAY_BE_LONG|MAY_BE_STRING|MAY_BE_NULL)
	ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, delta, IS_LONG, 0, "1")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, initial, IS_LONG, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ttl, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Table___construct arginfo_class_Mcds_Counter___construct

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Table_set, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, member, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Table_has arginfo_class_Mcds_Set_contains

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Table_get, 0, 1, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, member, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Table_delete arginfo_class_Mcds_Set_contains

#define arginfo_class_Mcds_Table_keys arginfo_class_Mcds_Set_members

#define arginfo_class_Mcds_Table_entries arginfo_class_Mcds_Set_members

#define arginfo_class_Mcds_HyperLogLog___construct arginfo_class_Mcds_Counter___construct

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_HyperLogLog_add, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, element, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_HyperLogLog_count arginfo_class_Mcds_CounterMap_scale

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_HyperLogLog_merge, 0, 0, IS_VOID, 0)
	ZEND_ARG_VARIADIC_OBJ_INFO(0, sources, Mcds\\HyperLogLog, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_HyperLogLog_countUnion, 0, 0, IS_LONG, 0)
	ZEND_ARG_VARIADIC_OBJ_INFO(0, others, Mcds\\HyperLogLog, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_HyperLogLog_addMany, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, elements, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_HyperLogLog_clear arginfo_class_Mcds_Counter_reset

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_HyperLogLog_withTtl, 0, 1, Mcds\\HyperLogLog, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_BloomFilter___construct, 0, 0, 4)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, expectedItems, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, falsePositiveRate, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_BloomFilter_add arginfo_class_Mcds_HyperLogLog_add

#define arginfo_class_Mcds_BloomFilter_contains arginfo_class_Mcds_HyperLogLog_add

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_BloomFilter_addMany, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, elements, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_BloomFilter_containsMany, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, elements, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_BloomFilter_clear arginfo_class_Mcds_Counter_reset

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_BloomFilter_withTtl, 0, 1, Mcds\\BloomFilter, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_ActivityBitmap___construct, 0, 0, 4)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, startUnixSeconds, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, unitMilliseconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_ActivityBitmap_set, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, index, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_ActivityBitmap_mark, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, atUnixMs, IS_LONG, 1, "null")
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_ActivityBitmap_get arginfo_class_Mcds_ActivityBitmap_set

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_ActivityBitmap_count, 0, 2, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, first, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, last, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_ActivityBitmap_withTtl, 0, 1, Mcds\\ActivityBitmap, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_TimeSeries___construct, 0, 0, 3)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, resolutions, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_TimeSeries_name arginfo_Mcds_version

#define arginfo_class_Mcds_TimeSeries_resolutions arginfo_class_Mcds_Set_members

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_TimeSeries_withLossCheck, 0, 1, Mcds\\TimeSeries, 0)
	ZEND_ARG_TYPE_INFO(0, check, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_TimeSeries_withMaxClockSkew, 0, 1, Mcds\\TimeSeries, 0)
	ZEND_ARG_TYPE_INFO(0, skewMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_record, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, tsMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_recordNow, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_range, 0, 3, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, stepMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_aggregate, 0, 3, IS_ARRAY, 1)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, stepMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_count, 0, 3, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, stepMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_Mcds_TimeSeries_sum, 0, 3, MAY_BE_LONG|MAY_BE_STRING)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, stepMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_avg, 0, 3, IS_DOUBLE, 1)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, stepMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_min, 0, 3, IS_LONG, 1)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, stepMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_TimeSeries_max arginfo_class_Mcds_TimeSeries_min

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_TimeSeries_union, 0, 4, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, series, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, stepMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_TimeSeries_intersection arginfo_class_Mcds_TimeSeries_union

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_PackedSeries___construct, 0, 0, 6)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, slotMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, slotsPerPeriod, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, width, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, retentionMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_PackedSeries_incr, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, tsMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, delta, IS_LONG, 0, "1")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_PackedSeries_incrNow, 0, 0, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, delta, IS_LONG, 0, "1")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_PackedSeries_get, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, tsMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_PackedSeries_withLossCheck, 0, 1, Mcds\\PackedSeries, 0)
	ZEND_ARG_TYPE_INFO(0, check, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_PackedSeries_withMaxClockSkew, 0, 1, Mcds\\PackedSeries, 0)
	ZEND_ARG_TYPE_INFO(0, skewMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_PackedSeries_range, 0, 2, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_PackedSeries_sum, 0, 2, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, fromMs, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, toMs, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_Leaderboard___construct, 0, 0, 3)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, capacity, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Leaderboard_key arginfo_Mcds_version

#define arginfo_class_Mcds_Leaderboard_capacity arginfo_class_Mcds_CounterMap_scale

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_Mcds_Leaderboard_incr, 0, 1, MAY_BE_LONG|MAY_BE_STRING)
	ZEND_ARG_TYPE_INFO(0, member, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, by, IS_LONG, 0, "1")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Leaderboard_incrMany, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, increments, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Leaderboard_summary arginfo_class_Mcds_Set_members

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Leaderboard_top, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, k, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Mcds_Leaderboard_score, 0, 1, IS_ARRAY, 1)
	ZEND_ARG_TYPE_INFO(0, member, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_Leaderboard_clear arginfo_class_Mcds_Counter_reset

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_Leaderboard_withTtl, 0, 1, Mcds\\Leaderboard, 0)
	ZEND_ARG_TYPE_INFO(0, seconds, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Mcds_ScalableBloomFilter___construct, 0, 0, 4)
	ZEND_ARG_OBJ_INFO(0, store, Mcds\\Store, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, initialCapacity, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, errorRate, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Mcds_ScalableBloomFilter_withGrowth, 0, 1, Mcds\\ScalableBloomFilter, 0)
	ZEND_ARG_TYPE_INFO(0, growth, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Mcds_ScalableBloomFilter_headerKey arginfo_Mcds_version

#define arginfo_class_Mcds_ScalableBloomFilter_add arginfo_class_Mcds_HyperLogLog_add

#define arginfo_class_Mcds_ScalableBloomFilter_contains arginfo_class_Mcds_HyperLogLog_add

#define arginfo_class_Mcds_ScalableBloomFilter_containsMany arginfo_class_Mcds_BloomFilter_containsMany

#define arginfo_class_Mcds_ScalableBloomFilter_layers arginfo_class_Mcds_CounterMap_scale

#define arginfo_class_Mcds_ScalableBloomFilter_clear arginfo_class_Mcds_Counter_reset

#define arginfo_class_Mcds_Exception_getResultName arginfo_Mcds_version


ZEND_FUNCTION(Mcds_version);
ZEND_METHOD(Mcds_Store, __construct);
ZEND_METHOD(Mcds_Store, memcached);
ZEND_METHOD(Mcds_Store, memory);
ZEND_METHOD(Mcds_Store, fromUrl);
ZEND_METHOD(Mcds_Store, fromConfig);
ZEND_METHOD(Mcds_Store, isPersistent);
ZEND_METHOD(Mcds_Store, withPrefix);
ZEND_METHOD(Mcds_Store, update);
ZEND_METHOD(Mcds_Store, kv);
ZEND_METHOD(Mcds_Store, counter);
ZEND_METHOD(Mcds_Store, counterMap);
ZEND_METHOD(Mcds_Store, lock);
ZEND_METHOD(Mcds_Store, shadowCounter);
ZEND_METHOD(Mcds_Store, viewCounter);
ZEND_METHOD(Mcds_Store, set);
ZEND_METHOD(Mcds_Store, shardedSet);
ZEND_METHOD(Mcds_Store, intArray);
ZEND_METHOD(Mcds_Store, windowCounter);
ZEND_METHOD(Mcds_Store, rateLimiter);
ZEND_METHOD(Mcds_Store, eventLog);
ZEND_METHOD(Mcds_Store, table);
ZEND_METHOD(Mcds_Store, hyperLogLog);
ZEND_METHOD(Mcds_Store, bloomFilter);
ZEND_METHOD(Mcds_Store, activityBitmap);
ZEND_METHOD(Mcds_Store, timeSeries);
ZEND_METHOD(Mcds_Store, packedSeries);
ZEND_METHOD(Mcds_Store, leaderboard);
ZEND_METHOD(Mcds_Store, scalableBloomFilter);
ZEND_METHOD(Mcds_Counter, __construct);
ZEND_METHOD(Mcds_Counter, withKey);
ZEND_METHOD(Mcds_Counter, incr);
ZEND_METHOD(Mcds_Counter, decr);
ZEND_METHOD(Mcds_Counter, get);
ZEND_METHOD(Mcds_Counter, reset);
ZEND_METHOD(Mcds_Counter, incrMany);
ZEND_METHOD(Mcds_Counter, withTtl);
ZEND_METHOD(Mcds_ShadowCounter, __construct);
ZEND_METHOD(Mcds_ShadowCounter, incr);
ZEND_METHOD(Mcds_ShadowCounter, value);
ZEND_METHOD(Mcds_ViewCounter, __construct);
ZEND_METHOD(Mcds_ViewCounter, view);
ZEND_METHOD(Mcds_ViewCounter, get);
ZEND_METHOD(Mcds_ViewCounter, invalidate);
ZEND_METHOD(Mcds_Lock, __construct);
ZEND_METHOD(Mcds_Lock, withKey);
ZEND_METHOD(Mcds_Lock, acquire);
ZEND_METHOD(Mcds_Lock, acquireWithin);
ZEND_METHOD(Mcds_Lock, refresh);
ZEND_METHOD(Mcds_Lock, autoExtend);
ZEND_METHOD(Mcds_Lock, isLost);
ZEND_METHOD(Mcds_Lock, isAcquired);
ZEND_METHOD(Mcds_Lock, getFencingToken);
ZEND_METHOD(Mcds_Lock, getHolder);
ZEND_METHOD(Mcds_Lock, getOwnerToken);
ZEND_METHOD(Mcds_Lock, release);
ZEND_METHOD(Mcds_Lock, synchronized);
ZEND_METHOD(Mcds_Lock, getName);
ZEND_METHOD(Mcds_Lock, getTtl);
ZEND_METHOD(Mcds_Set, __construct);
ZEND_METHOD(Mcds_Set, add);
ZEND_METHOD(Mcds_Set, remove);
ZEND_METHOD(Mcds_Set, addMany);
ZEND_METHOD(Mcds_Set, removeMany);
ZEND_METHOD(Mcds_Set, contains);
ZEND_METHOD(Mcds_Set, members);
ZEND_METHOD(Mcds_Set, compact);
ZEND_METHOD(Mcds_Set, clear);
ZEND_METHOD(Mcds_Set, withTtl);
ZEND_METHOD(Mcds_ShardedSet, __construct);
ZEND_METHOD(Mcds_ShardedSet, add);
ZEND_METHOD(Mcds_ShardedSet, remove);
ZEND_METHOD(Mcds_ShardedSet, addMany);
ZEND_METHOD(Mcds_ShardedSet, removeMany);
ZEND_METHOD(Mcds_ShardedSet, contains);
ZEND_METHOD(Mcds_ShardedSet, members);
ZEND_METHOD(Mcds_ShardedSet, compact);
ZEND_METHOD(Mcds_ShardedSet, clear);
ZEND_METHOD(Mcds_IntArray, __construct);
ZEND_METHOD(Mcds_IntArray, add);
ZEND_METHOD(Mcds_IntArray, remove);
ZEND_METHOD(Mcds_IntArray, contains);
ZEND_METHOD(Mcds_IntArray, members);
ZEND_METHOD(Mcds_IntArray, clear);
ZEND_METHOD(Mcds_CounterMap, __construct);
ZEND_METHOD(Mcds_CounterMap, withScale);
ZEND_METHOD(Mcds_CounterMap, name);
ZEND_METHOD(Mcds_CounterMap, scale);
ZEND_METHOD(Mcds_CounterMap, registryKey);
ZEND_METHOD(Mcds_CounterMap, fieldKey);
ZEND_METHOD(Mcds_CounterMap, incr);
ZEND_METHOD(Mcds_CounterMap, incrDecimal);
ZEND_METHOD(Mcds_CounterMap, incrF64);
ZEND_METHOD(Mcds_CounterMap, get);
ZEND_METHOD(Mcds_CounterMap, getDecimal);
ZEND_METHOD(Mcds_CounterMap, getAll);
ZEND_METHOD(Mcds_CounterMap, getAllDecimal);
ZEND_METHOD(Mcds_CounterMap, fields);
ZEND_METHOD(Mcds_CounterMap, len);
ZEND_METHOD(Mcds_CounterMap, isEmpty);
ZEND_METHOD(Mcds_CounterMap, remove);
ZEND_METHOD(Mcds_WindowCounter, __construct);
ZEND_METHOD(Mcds_WindowCounter, incr);
ZEND_METHOD(Mcds_WindowCounter, value);
ZEND_METHOD(Mcds_Decision, __construct);
ZEND_METHOD(Mcds_RateLimiter, __construct);
ZEND_METHOD(Mcds_RateLimiter, check);
ZEND_METHOD(Mcds_RateLimiter, peek);
ZEND_METHOD(Mcds_EventLog, __construct);
ZEND_METHOD(Mcds_EventLog, put);
ZEND_METHOD(Mcds_EventLog, putAt);
ZEND_METHOD(Mcds_EventLog, fetch);
ZEND_METHOD(Mcds_EventLog, since);
ZEND_METHOD(Mcds_Cursor, __construct);
ZEND_METHOD(Mcds_Cursor, after);
ZEND_METHOD(Mcds_KeyValue, __construct);
ZEND_METHOD(Mcds_KeyValue, get);
ZEND_METHOD(Mcds_KeyValue, set);
ZEND_METHOD(Mcds_KeyValue, add);
ZEND_METHOD(Mcds_KeyValue, delete);
ZEND_METHOD(Mcds_KeyValue, incr);
ZEND_METHOD(Mcds_Table, __construct);
ZEND_METHOD(Mcds_Table, set);
ZEND_METHOD(Mcds_Table, has);
ZEND_METHOD(Mcds_Table, get);
ZEND_METHOD(Mcds_Table, delete);
ZEND_METHOD(Mcds_Table, keys);
ZEND_METHOD(Mcds_Table, entries);
ZEND_METHOD(Mcds_HyperLogLog, __construct);
ZEND_METHOD(Mcds_HyperLogLog, add);
ZEND_METHOD(Mcds_HyperLogLog, count);
ZEND_METHOD(Mcds_HyperLogLog, merge);
ZEND_METHOD(Mcds_HyperLogLog, countUnion);
ZEND_METHOD(Mcds_HyperLogLog, addMany);
ZEND_METHOD(Mcds_HyperLogLog, clear);
ZEND_METHOD(Mcds_HyperLogLog, withTtl);
ZEND_METHOD(Mcds_BloomFilter, __construct);
ZEND_METHOD(Mcds_BloomFilter, add);
ZEND_METHOD(Mcds_BloomFilter, contains);
ZEND_METHOD(Mcds_BloomFilter, addMany);
ZEND_METHOD(Mcds_BloomFilter, containsMany);
ZEND_METHOD(Mcds_BloomFilter, clear);
ZEND_METHOD(Mcds_BloomFilter, withTtl);
ZEND_METHOD(Mcds_ActivityBitmap, __construct);
ZEND_METHOD(Mcds_ActivityBitmap, set);
ZEND_METHOD(Mcds_ActivityBitmap, mark);
ZEND_METHOD(Mcds_ActivityBitmap, get);
ZEND_METHOD(Mcds_ActivityBitmap, count);
ZEND_METHOD(Mcds_ActivityBitmap, withTtl);
ZEND_METHOD(Mcds_TimeSeries, __construct);
ZEND_METHOD(Mcds_TimeSeries, name);
ZEND_METHOD(Mcds_TimeSeries, resolutions);
ZEND_METHOD(Mcds_TimeSeries, withLossCheck);
ZEND_METHOD(Mcds_TimeSeries, withMaxClockSkew);
ZEND_METHOD(Mcds_TimeSeries, record);
ZEND_METHOD(Mcds_TimeSeries, recordNow);
ZEND_METHOD(Mcds_TimeSeries, range);
ZEND_METHOD(Mcds_TimeSeries, aggregate);
ZEND_METHOD(Mcds_TimeSeries, count);
ZEND_METHOD(Mcds_TimeSeries, sum);
ZEND_METHOD(Mcds_TimeSeries, avg);
ZEND_METHOD(Mcds_TimeSeries, min);
ZEND_METHOD(Mcds_TimeSeries, max);
ZEND_METHOD(Mcds_TimeSeries, union);
ZEND_METHOD(Mcds_TimeSeries, intersection);
ZEND_METHOD(Mcds_PackedSeries, __construct);
ZEND_METHOD(Mcds_PackedSeries, incr);
ZEND_METHOD(Mcds_PackedSeries, incrNow);
ZEND_METHOD(Mcds_PackedSeries, get);
ZEND_METHOD(Mcds_PackedSeries, withLossCheck);
ZEND_METHOD(Mcds_PackedSeries, withMaxClockSkew);
ZEND_METHOD(Mcds_PackedSeries, range);
ZEND_METHOD(Mcds_PackedSeries, sum);
ZEND_METHOD(Mcds_Leaderboard, __construct);
ZEND_METHOD(Mcds_Leaderboard, key);
ZEND_METHOD(Mcds_Leaderboard, capacity);
ZEND_METHOD(Mcds_Leaderboard, incr);
ZEND_METHOD(Mcds_Leaderboard, incrMany);
ZEND_METHOD(Mcds_Leaderboard, summary);
ZEND_METHOD(Mcds_Leaderboard, top);
ZEND_METHOD(Mcds_Leaderboard, score);
ZEND_METHOD(Mcds_Leaderboard, clear);
ZEND_METHOD(Mcds_Leaderboard, withTtl);
ZEND_METHOD(Mcds_ScalableBloomFilter, __construct);
ZEND_METHOD(Mcds_ScalableBloomFilter, withGrowth);
ZEND_METHOD(Mcds_ScalableBloomFilter, headerKey);
ZEND_METHOD(Mcds_ScalableBloomFilter, add);
ZEND_METHOD(Mcds_ScalableBloomFilter, contains);
ZEND_METHOD(Mcds_ScalableBloomFilter, containsMany);
ZEND_METHOD(Mcds_ScalableBloomFilter, layers);
ZEND_METHOD(Mcds_ScalableBloomFilter, clear);
ZEND_METHOD(Mcds_Exception, getResultName);


static const zend_function_entry ext_functions[] = {
	ZEND_NS_FALIAS("Mcds", version, Mcds_version, arginfo_Mcds_version)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Store_methods[] = {
	ZEND_ME(Mcds_Store, __construct, arginfo_class_Mcds_Store___construct, ZEND_ACC_PRIVATE)
	ZEND_ME(Mcds_Store, memcached, arginfo_class_Mcds_Store_memcached, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_Store, memory, arginfo_class_Mcds_Store_memory, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_Store, fromUrl, arginfo_class_Mcds_Store_fromUrl, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_Store, fromConfig, arginfo_class_Mcds_Store_fromConfig, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_Store, isPersistent, arginfo_class_Mcds_Store_isPersistent, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, withPrefix, arginfo_class_Mcds_Store_withPrefix, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, update, arginfo_class_Mcds_Store_update, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, kv, arginfo_class_Mcds_Store_kv, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, counter, arginfo_class_Mcds_Store_counter, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, counterMap, arginfo_class_Mcds_Store_counterMap, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, lock, arginfo_class_Mcds_Store_lock, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, shadowCounter, arginfo_class_Mcds_Store_shadowCounter, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, viewCounter, arginfo_class_Mcds_Store_viewCounter, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, set, arginfo_class_Mcds_Store_set, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, shardedSet, arginfo_class_Mcds_Store_shardedSet, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, intArray, arginfo_class_Mcds_Store_intArray, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, windowCounter, arginfo_class_Mcds_Store_windowCounter, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, rateLimiter, arginfo_class_Mcds_Store_rateLimiter, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, eventLog, arginfo_class_Mcds_Store_eventLog, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, table, arginfo_class_Mcds_Store_table, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, hyperLogLog, arginfo_class_Mcds_Store_hyperLogLog, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, bloomFilter, arginfo_class_Mcds_Store_bloomFilter, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, activityBitmap, arginfo_class_Mcds_Store_activityBitmap, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, timeSeries, arginfo_class_Mcds_Store_timeSeries, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, packedSeries, arginfo_class_Mcds_Store_packedSeries, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, leaderboard, arginfo_class_Mcds_Store_leaderboard, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Store, scalableBloomFilter, arginfo_class_Mcds_Store_scalableBloomFilter, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Counter_methods[] = {
	ZEND_ME(Mcds_Counter, __construct, arginfo_class_Mcds_Counter___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Counter, withKey, arginfo_class_Mcds_Counter_withKey, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_Counter, incr, arginfo_class_Mcds_Counter_incr, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Counter, decr, arginfo_class_Mcds_Counter_decr, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Counter, get, arginfo_class_Mcds_Counter_get, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Counter, reset, arginfo_class_Mcds_Counter_reset, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Counter, incrMany, arginfo_class_Mcds_Counter_incrMany, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_Counter, withTtl, arginfo_class_Mcds_Counter_withTtl, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ShadowCounter_methods[] = {
	ZEND_ME(Mcds_ShadowCounter, __construct, arginfo_class_Mcds_ShadowCounter___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShadowCounter, incr, arginfo_class_Mcds_ShadowCounter_incr, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShadowCounter, value, arginfo_class_Mcds_ShadowCounter_value, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ViewCounter_methods[] = {
	ZEND_ME(Mcds_ViewCounter, __construct, arginfo_class_Mcds_ViewCounter___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ViewCounter, view, arginfo_class_Mcds_ViewCounter_view, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ViewCounter, get, arginfo_class_Mcds_ViewCounter_get, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ViewCounter, invalidate, arginfo_class_Mcds_ViewCounter_invalidate, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Lock_methods[] = {
	ZEND_ME(Mcds_Lock, __construct, arginfo_class_Mcds_Lock___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, withKey, arginfo_class_Mcds_Lock_withKey, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_Lock, acquire, arginfo_class_Mcds_Lock_acquire, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, acquireWithin, arginfo_class_Mcds_Lock_acquireWithin, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, refresh, arginfo_class_Mcds_Lock_refresh, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, autoExtend, arginfo_class_Mcds_Lock_autoExtend, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, isLost, arginfo_class_Mcds_Lock_isLost, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, isAcquired, arginfo_class_Mcds_Lock_isAcquired, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, getFencingToken, arginfo_class_Mcds_Lock_getFencingToken, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, getHolder, arginfo_class_Mcds_Lock_getHolder, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, getOwnerToken, arginfo_class_Mcds_Lock_getOwnerToken, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, release, arginfo_class_Mcds_Lock_release, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, synchronized, arginfo_class_Mcds_Lock_synchronized, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, getName, arginfo_class_Mcds_Lock_getName, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Lock, getTtl, arginfo_class_Mcds_Lock_getTtl, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Set_methods[] = {
	ZEND_ME(Mcds_Set, __construct, arginfo_class_Mcds_Set___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, add, arginfo_class_Mcds_Set_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, remove, arginfo_class_Mcds_Set_remove, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, addMany, arginfo_class_Mcds_Set_addMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, removeMany, arginfo_class_Mcds_Set_removeMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, contains, arginfo_class_Mcds_Set_contains, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, members, arginfo_class_Mcds_Set_members, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, compact, arginfo_class_Mcds_Set_compact, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, clear, arginfo_class_Mcds_Set_clear, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Set, withTtl, arginfo_class_Mcds_Set_withTtl, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ShardedSet_methods[] = {
	ZEND_ME(Mcds_ShardedSet, __construct, arginfo_class_Mcds_ShardedSet___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, add, arginfo_class_Mcds_ShardedSet_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, remove, arginfo_class_Mcds_ShardedSet_remove, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, addMany, arginfo_class_Mcds_ShardedSet_addMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, removeMany, arginfo_class_Mcds_ShardedSet_removeMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, contains, arginfo_class_Mcds_ShardedSet_contains, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, members, arginfo_class_Mcds_ShardedSet_members, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, compact, arginfo_class_Mcds_ShardedSet_compact, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ShardedSet, clear, arginfo_class_Mcds_ShardedSet_clear, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_IntArray_methods[] = {
	ZEND_ME(Mcds_IntArray, __construct, arginfo_class_Mcds_IntArray___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_IntArray, add, arginfo_class_Mcds_IntArray_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_IntArray, remove, arginfo_class_Mcds_IntArray_remove, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_IntArray, contains, arginfo_class_Mcds_IntArray_contains, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_IntArray, members, arginfo_class_Mcds_IntArray_members, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_IntArray, clear, arginfo_class_Mcds_IntArray_clear, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_CounterMap_methods[] = {
	ZEND_ME(Mcds_CounterMap, __construct, arginfo_class_Mcds_CounterMap___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, withScale, arginfo_class_Mcds_CounterMap_withScale, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, name, arginfo_class_Mcds_CounterMap_name, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, scale, arginfo_class_Mcds_CounterMap_scale, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, registryKey, arginfo_class_Mcds_CounterMap_registryKey, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, fieldKey, arginfo_class_Mcds_CounterMap_fieldKey, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, incr, arginfo_class_Mcds_CounterMap_incr, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, incrDecimal, arginfo_class_Mcds_CounterMap_incrDecimal, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, incrF64, arginfo_class_Mcds_CounterMap_incrF64, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, get, arginfo_class_Mcds_CounterMap_get, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, getDecimal, arginfo_class_Mcds_CounterMap_getDecimal, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, getAll, arginfo_class_Mcds_CounterMap_getAll, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, getAllDecimal, arginfo_class_Mcds_CounterMap_getAllDecimal, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, fields, arginfo_class_Mcds_CounterMap_fields, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, len, arginfo_class_Mcds_CounterMap_len, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, isEmpty, arginfo_class_Mcds_CounterMap_isEmpty, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_CounterMap, remove, arginfo_class_Mcds_CounterMap_remove, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_WindowCounter_methods[] = {
	ZEND_ME(Mcds_WindowCounter, __construct, arginfo_class_Mcds_WindowCounter___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_WindowCounter, incr, arginfo_class_Mcds_WindowCounter_incr, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_WindowCounter, value, arginfo_class_Mcds_WindowCounter_value, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Decision_methods[] = {
	ZEND_ME(Mcds_Decision, __construct, arginfo_class_Mcds_Decision___construct, ZEND_ACC_PRIVATE)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_RateLimiter_methods[] = {
	ZEND_ME(Mcds_RateLimiter, __construct, arginfo_class_Mcds_RateLimiter___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_RateLimiter, check, arginfo_class_Mcds_RateLimiter_check, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_RateLimiter, peek, arginfo_class_Mcds_RateLimiter_peek, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_EventLog_methods[] = {
	ZEND_ME(Mcds_EventLog, __construct, arginfo_class_Mcds_EventLog___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_EventLog, put, arginfo_class_Mcds_EventLog_put, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_EventLog, putAt, arginfo_class_Mcds_EventLog_putAt, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_EventLog, fetch, arginfo_class_Mcds_EventLog_fetch, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_EventLog, since, arginfo_class_Mcds_EventLog_since, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Cursor_methods[] = {
	ZEND_ME(Mcds_Cursor, __construct, arginfo_class_Mcds_Cursor___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Cursor, after, arginfo_class_Mcds_Cursor_after, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_KeyValue_methods[] = {
	ZEND_ME(Mcds_KeyValue, __construct, arginfo_class_Mcds_KeyValue___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_KeyValue, get, arginfo_class_Mcds_KeyValue_get, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_KeyValue, set, arginfo_class_Mcds_KeyValue_set, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_KeyValue, add, arginfo_class_Mcds_KeyValue_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_KeyValue, delete, arginfo_class_Mcds_KeyValue_delete, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_KeyValue, incr, arginfo_class_Mcds_KeyValue_incr, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Table_methods[] = {
	ZEND_ME(Mcds_Table, __construct, arginfo_class_Mcds_Table___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Table, set, arginfo_class_Mcds_Table_set, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Table, has, arginfo_class_Mcds_Table_has, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Table, get, arginfo_class_Mcds_Table_get, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Table, delete, arginfo_class_Mcds_Table_delete, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Table, keys, arginfo_class_Mcds_Table_keys, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Table, entries, arginfo_class_Mcds_Table_entries, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_HyperLogLog_methods[] = {
	ZEND_ME(Mcds_HyperLogLog, __construct, arginfo_class_Mcds_HyperLogLog___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_HyperLogLog, add, arginfo_class_Mcds_HyperLogLog_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_HyperLogLog, count, arginfo_class_Mcds_HyperLogLog_count, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_HyperLogLog, merge, arginfo_class_Mcds_HyperLogLog_merge, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_HyperLogLog, countUnion, arginfo_class_Mcds_HyperLogLog_countUnion, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_HyperLogLog, addMany, arginfo_class_Mcds_HyperLogLog_addMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_HyperLogLog, clear, arginfo_class_Mcds_HyperLogLog_clear, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_HyperLogLog, withTtl, arginfo_class_Mcds_HyperLogLog_withTtl, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_BloomFilter_methods[] = {
	ZEND_ME(Mcds_BloomFilter, __construct, arginfo_class_Mcds_BloomFilter___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_BloomFilter, add, arginfo_class_Mcds_BloomFilter_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_BloomFilter, contains, arginfo_class_Mcds_BloomFilter_contains, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_BloomFilter, addMany, arginfo_class_Mcds_BloomFilter_addMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_BloomFilter, containsMany, arginfo_class_Mcds_BloomFilter_containsMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_BloomFilter, clear, arginfo_class_Mcds_BloomFilter_clear, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_BloomFilter, withTtl, arginfo_class_Mcds_BloomFilter_withTtl, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ActivityBitmap_methods[] = {
	ZEND_ME(Mcds_ActivityBitmap, __construct, arginfo_class_Mcds_ActivityBitmap___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ActivityBitmap, set, arginfo_class_Mcds_ActivityBitmap_set, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ActivityBitmap, mark, arginfo_class_Mcds_ActivityBitmap_mark, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ActivityBitmap, get, arginfo_class_Mcds_ActivityBitmap_get, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ActivityBitmap, count, arginfo_class_Mcds_ActivityBitmap_count, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ActivityBitmap, withTtl, arginfo_class_Mcds_ActivityBitmap_withTtl, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_TimeSeries_methods[] = {
	ZEND_ME(Mcds_TimeSeries, __construct, arginfo_class_Mcds_TimeSeries___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, name, arginfo_class_Mcds_TimeSeries_name, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, resolutions, arginfo_class_Mcds_TimeSeries_resolutions, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, withLossCheck, arginfo_class_Mcds_TimeSeries_withLossCheck, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, withMaxClockSkew, arginfo_class_Mcds_TimeSeries_withMaxClockSkew, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, record, arginfo_class_Mcds_TimeSeries_record, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, recordNow, arginfo_class_Mcds_TimeSeries_recordNow, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, range, arginfo_class_Mcds_TimeSeries_range, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, aggregate, arginfo_class_Mcds_TimeSeries_aggregate, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, count, arginfo_class_Mcds_TimeSeries_count, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, sum, arginfo_class_Mcds_TimeSeries_sum, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, avg, arginfo_class_Mcds_TimeSeries_avg, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, min, arginfo_class_Mcds_TimeSeries_min, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, max, arginfo_class_Mcds_TimeSeries_max, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_TimeSeries, union, arginfo_class_Mcds_TimeSeries_union, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_ME(Mcds_TimeSeries, intersection, arginfo_class_Mcds_TimeSeries_intersection, ZEND_ACC_PUBLIC|ZEND_ACC_STATIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_PackedSeries_methods[] = {
	ZEND_ME(Mcds_PackedSeries, __construct, arginfo_class_Mcds_PackedSeries___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_PackedSeries, incr, arginfo_class_Mcds_PackedSeries_incr, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_PackedSeries, incrNow, arginfo_class_Mcds_PackedSeries_incrNow, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_PackedSeries, get, arginfo_class_Mcds_PackedSeries_get, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_PackedSeries, withLossCheck, arginfo_class_Mcds_PackedSeries_withLossCheck, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_PackedSeries, withMaxClockSkew, arginfo_class_Mcds_PackedSeries_withMaxClockSkew, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_PackedSeries, range, arginfo_class_Mcds_PackedSeries_range, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_PackedSeries, sum, arginfo_class_Mcds_PackedSeries_sum, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Leaderboard_methods[] = {
	ZEND_ME(Mcds_Leaderboard, __construct, arginfo_class_Mcds_Leaderboard___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, key, arginfo_class_Mcds_Leaderboard_key, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, capacity, arginfo_class_Mcds_Leaderboard_capacity, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, incr, arginfo_class_Mcds_Leaderboard_incr, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, incrMany, arginfo_class_Mcds_Leaderboard_incrMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, summary, arginfo_class_Mcds_Leaderboard_summary, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, top, arginfo_class_Mcds_Leaderboard_top, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, score, arginfo_class_Mcds_Leaderboard_score, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, clear, arginfo_class_Mcds_Leaderboard_clear, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_Leaderboard, withTtl, arginfo_class_Mcds_Leaderboard_withTtl, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ScalableBloomFilter_methods[] = {
	ZEND_ME(Mcds_ScalableBloomFilter, __construct, arginfo_class_Mcds_ScalableBloomFilter___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ScalableBloomFilter, withGrowth, arginfo_class_Mcds_ScalableBloomFilter_withGrowth, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ScalableBloomFilter, headerKey, arginfo_class_Mcds_ScalableBloomFilter_headerKey, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ScalableBloomFilter, add, arginfo_class_Mcds_ScalableBloomFilter_add, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ScalableBloomFilter, contains, arginfo_class_Mcds_ScalableBloomFilter_contains, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ScalableBloomFilter, containsMany, arginfo_class_Mcds_ScalableBloomFilter_containsMany, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ScalableBloomFilter, layers, arginfo_class_Mcds_ScalableBloomFilter_layers, ZEND_ACC_PUBLIC)
	ZEND_ME(Mcds_ScalableBloomFilter, clear, arginfo_class_Mcds_ScalableBloomFilter_clear, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_Exception_methods[] = {
	ZEND_ME(Mcds_Exception, getResultName, arginfo_class_Mcds_Exception_getResultName, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_InternalException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_CallbackFailedException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_InvalidKeyException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ValueTooLargeException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_InvalidArgumentException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_NonNumericException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_CorruptException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_LostException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_BackendException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_IoException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ServerDownException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_TimeoutException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_AmbiguousException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_OutOfMemoryException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ServerErrorException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ProtocolException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_ConflictException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_UnsupportedException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_WaitTimeoutException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_Mcds_LockLostException_methods[] = {
	ZEND_FE_END
};

static zend_class_entry *register_class_Mcds_Store(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Store", class_Mcds_Store_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Counter(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Counter", class_Mcds_Counter_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ShadowCounter(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ShadowCounter", class_Mcds_ShadowCounter_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ViewCounter(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ViewCounter", class_Mcds_ViewCounter_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Lock(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Lock", class_Mcds_Lock_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Set(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Set", class_Mcds_Set_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ShardedSet(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ShardedSet", class_Mcds_ShardedSet_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_IntArray(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "IntArray", class_Mcds_IntArray_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_CounterMap(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "CounterMap", class_Mcds_CounterMap_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_WindowCounter(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "WindowCounter", class_Mcds_WindowCounter_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Decision(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Decision", class_Mcds_Decision_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	zval property_allowed_default_value;
	ZVAL_UNDEF(&property_allowed_default_value);
	zend_string *property_allowed_name = zend_string_init("allowed", sizeof("allowed") - 1, 1);
	zend_declare_typed_property(class_entry, property_allowed_name, &property_allowed_default_value, ZEND_ACC_PUBLIC|ZEND_ACC_READONLY, NULL, (zend_type) ZEND_TYPE_INIT_MASK(MAY_BE_BOOL));
	zend_string_release(property_allowed_name);

	zval property_remaining_default_value;
	ZVAL_UNDEF(&property_remaining_default_value);
	zend_string *property_remaining_name = zend_string_init("remaining", sizeof("remaining") - 1, 1);
	zend_declare_typed_property(class_entry, property_remaining_name, &property_remaining_default_value, ZEND_ACC_PUBLIC|ZEND_ACC_READONLY, NULL, (zend_type) ZEND_TYPE_INIT_MASK(MAY_BE_LONG));
	zend_string_release(property_remaining_name);

	zval property_retryAfterMs_default_value;
	ZVAL_UNDEF(&property_retryAfterMs_default_value);
	zend_string *property_retryAfterMs_name = zend_string_init("retryAfterMs", sizeof("retryAfterMs") - 1, 1);
	zend_declare_typed_property(class_entry, property_retryAfterMs_name, &property_retryAfterMs_default_value, ZEND_ACC_PUBLIC|ZEND_ACC_READONLY, NULL, (zend_type) ZEND_TYPE_INIT_MASK(MAY_BE_LONG));
	zend_string_release(property_retryAfterMs_name);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_RateLimiter(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "RateLimiter", class_Mcds_RateLimiter_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_EventLog(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "EventLog", class_Mcds_EventLog_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Cursor(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Cursor", class_Mcds_Cursor_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES;

	zval property_atMs_default_value;
	ZVAL_UNDEF(&property_atMs_default_value);
	zend_string *property_atMs_name = zend_string_init("atMs", sizeof("atMs") - 1, 1);
	zend_declare_typed_property(class_entry, property_atMs_name, &property_atMs_default_value, ZEND_ACC_PUBLIC|ZEND_ACC_READONLY, NULL, (zend_type) ZEND_TYPE_INIT_MASK(MAY_BE_LONG));
	zend_string_release(property_atMs_name);

	zval property_seenAtMs_default_value;
	ZVAL_UNDEF(&property_seenAtMs_default_value);
	zend_string *property_seenAtMs_name = zend_string_init("seenAtMs", sizeof("seenAtMs") - 1, 1);
	zend_declare_typed_property(class_entry, property_seenAtMs_name, &property_seenAtMs_default_value, ZEND_ACC_PUBLIC|ZEND_ACC_READONLY, NULL, (zend_type) ZEND_TYPE_INIT_MASK(MAY_BE_LONG));
	zend_string_release(property_seenAtMs_name);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_KeyValue(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "KeyValue", class_Mcds_KeyValue_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Table(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Table", class_Mcds_Table_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_HyperLogLog(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "HyperLogLog", class_Mcds_HyperLogLog_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_BloomFilter(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "BloomFilter", class_Mcds_BloomFilter_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ActivityBitmap(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ActivityBitmap", class_Mcds_ActivityBitmap_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_TimeSeries(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "TimeSeries", class_Mcds_TimeSeries_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_PackedSeries(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "PackedSeries", class_Mcds_PackedSeries_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Leaderboard(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Leaderboard", class_Mcds_Leaderboard_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ScalableBloomFilter(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ScalableBloomFilter", class_Mcds_ScalableBloomFilter_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_FINAL|ZEND_ACC_NO_DYNAMIC_PROPERTIES|ZEND_ACC_NOT_SERIALIZABLE;

	return class_entry;
}

static zend_class_entry *register_class_Mcds_Exception(zend_class_entry *class_entry_RuntimeException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "Exception", class_Mcds_Exception_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_RuntimeException);

	zval const_NULL_ARGUMENT_value;
	ZVAL_LONG(&const_NULL_ARGUMENT_value, MCDS_NULL_ARGUMENT);
	zend_string *const_NULL_ARGUMENT_name = zend_string_init_interned("NULL_ARGUMENT", sizeof("NULL_ARGUMENT") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_NULL_ARGUMENT_name, &const_NULL_ARGUMENT_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_NULL_ARGUMENT_name);

	zval const_INVALID_UTF8_value;
	ZVAL_LONG(&const_INVALID_UTF8_value, MCDS_INVALID_UTF8);
	zend_string *const_INVALID_UTF8_name = zend_string_init_interned("INVALID_UTF8", sizeof("INVALID_UTF8") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_INVALID_UTF8_name, &const_INVALID_UTF8_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_INVALID_UTF8_name);

	zval const_PANIC_value;
	ZVAL_LONG(&const_PANIC_value, MCDS_PANIC);
	zend_string *const_PANIC_name = zend_string_init_interned("PANIC", sizeof("PANIC") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_PANIC_name, &const_PANIC_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_PANIC_name);

	zval const_INTERNAL_value;
	ZVAL_LONG(&const_INTERNAL_value, MCDS_INTERNAL);
	zend_string *const_INTERNAL_name = zend_string_init_interned("INTERNAL", sizeof("INTERNAL") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_INTERNAL_name, &const_INTERNAL_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_INTERNAL_name);

	zval const_CALLBACK_FAILED_value;
	ZVAL_LONG(&const_CALLBACK_FAILED_value, MCDS_CALLBACK_FAILED);
	zend_string *const_CALLBACK_FAILED_name = zend_string_init_interned("CALLBACK_FAILED", sizeof("CALLBACK_FAILED") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CALLBACK_FAILED_name, &const_CALLBACK_FAILED_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CALLBACK_FAILED_name);

	zval const_INVALID_KEY_value;
	ZVAL_LONG(&const_INVALID_KEY_value, MCDS_INVALID_KEY);
	zend_string *const_INVALID_KEY_name = zend_string_init_interned("INVALID_KEY", sizeof("INVALID_KEY") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_INVALID_KEY_name, &const_INVALID_KEY_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_INVALID_KEY_name);

	zval const_VALUE_TOO_LARGE_value;
	ZVAL_LONG(&const_VALUE_TOO_LARGE_value, MCDS_VALUE_TOO_LARGE);
	zend_string *const_VALUE_TOO_LARGE_name = zend_string_init_interned("VALUE_TOO_LARGE", sizeof("VALUE_TOO_LARGE") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_VALUE_TOO_LARGE_name, &const_VALUE_TOO_LARGE_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_VALUE_TOO_LARGE_name);

	zval const_INVALID_ARGUMENT_value;
	ZVAL_LONG(&const_INVALID_ARGUMENT_value, MCDS_INVALID_ARGUMENT);
	zend_string *const_INVALID_ARGUMENT_name = zend_string_init_interned("INVALID_ARGUMENT", sizeof("INVALID_ARGUMENT") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_INVALID_ARGUMENT_name, &const_INVALID_ARGUMENT_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_INVALID_ARGUMENT_name);

	zval const_NON_NUMERIC_value;
	ZVAL_LONG(&const_NON_NUMERIC_value, MCDS_NON_NUMERIC);
	zend_string *const_NON_NUMERIC_name = zend_string_init_interned("NON_NUMERIC", sizeof("NON_NUMERIC") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_NON_NUMERIC_name, &const_NON_NUMERIC_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_NON_NUMERIC_name);

	zval const_CORRUPT_value;
	ZVAL_LONG(&const_CORRUPT_value, MCDS_CORRUPT);
	zend_string *const_CORRUPT_name = zend_string_init_interned("CORRUPT", sizeof("CORRUPT") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CORRUPT_name, &const_CORRUPT_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CORRUPT_name);

	zval const_LOST_value;
	ZVAL_LONG(&const_LOST_value, MCDS_LOST);
	zend_string *const_LOST_name = zend_string_init_interned("LOST", sizeof("LOST") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_LOST_name, &const_LOST_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_LOST_name);

	zval const_IO_value;
	ZVAL_LONG(&const_IO_value, MCDS_IO);
	zend_string *const_IO_name = zend_string_init_interned("IO", sizeof("IO") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_IO_name, &const_IO_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_IO_name);

	zval const_SERVER_DOWN_value;
	ZVAL_LONG(&const_SERVER_DOWN_value, MCDS_SERVER_DOWN);
	zend_string *const_SERVER_DOWN_name = zend_string_init_interned("SERVER_DOWN", sizeof("SERVER_DOWN") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_SERVER_DOWN_name, &const_SERVER_DOWN_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_SERVER_DOWN_name);

	zval const_TIMEOUT_value;
	ZVAL_LONG(&const_TIMEOUT_value, MCDS_TIMEOUT);
	zend_string *const_TIMEOUT_name = zend_string_init_interned("TIMEOUT", sizeof("TIMEOUT") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_TIMEOUT_name, &const_TIMEOUT_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_TIMEOUT_name);

	zval const_AMBIGUOUS_value;
	ZVAL_LONG(&const_AMBIGUOUS_value, MCDS_AMBIGUOUS);
	zend_string *const_AMBIGUOUS_name = zend_string_init_interned("AMBIGUOUS", sizeof("AMBIGUOUS") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_AMBIGUOUS_name, &const_AMBIGUOUS_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_AMBIGUOUS_name);

	zval const_OUT_OF_MEMORY_value;
	ZVAL_LONG(&const_OUT_OF_MEMORY_value, MCDS_OUT_OF_MEMORY);
	zend_string *const_OUT_OF_MEMORY_name = zend_string_init_interned("OUT_OF_MEMORY", sizeof("OUT_OF_MEMORY") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_OUT_OF_MEMORY_name, &const_OUT_OF_MEMORY_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_OUT_OF_MEMORY_name);

	zval const_SERVER_ERROR_value;
	ZVAL_LONG(&const_SERVER_ERROR_value, MCDS_SERVER_ERROR);
	zend_string *const_SERVER_ERROR_name = zend_string_init_interned("SERVER_ERROR", sizeof("SERVER_ERROR") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_SERVER_ERROR_name, &const_SERVER_ERROR_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_SERVER_ERROR_name);

	zval const_PROTOCOL_value;
	ZVAL_LONG(&const_PROTOCOL_value, MCDS_PROTOCOL);
	zend_string *const_PROTOCOL_name = zend_string_init_interned("PROTOCOL", sizeof("PROTOCOL") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_PROTOCOL_name, &const_PROTOCOL_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_PROTOCOL_name);

	zval const_CONFLICT_value;
	ZVAL_LONG(&const_CONFLICT_value, MCDS_CONFLICT);
	zend_string *const_CONFLICT_name = zend_string_init_interned("CONFLICT", sizeof("CONFLICT") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CONFLICT_name, &const_CONFLICT_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CONFLICT_name);

	zval const_UNSUPPORTED_value;
	ZVAL_LONG(&const_UNSUPPORTED_value, MCDS_UNSUPPORTED);
	zend_string *const_UNSUPPORTED_name = zend_string_init_interned("UNSUPPORTED", sizeof("UNSUPPORTED") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_UNSUPPORTED_name, &const_UNSUPPORTED_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_UNSUPPORTED_name);

	zval const_WAIT_TIMEOUT_value;
	ZVAL_LONG(&const_WAIT_TIMEOUT_value, MCDS_WAIT_TIMEOUT);
	zend_string *const_WAIT_TIMEOUT_name = zend_string_init_interned("WAIT_TIMEOUT", sizeof("WAIT_TIMEOUT") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_WAIT_TIMEOUT_name, &const_WAIT_TIMEOUT_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_WAIT_TIMEOUT_name);

	zval const_OTHER_value;
	ZVAL_LONG(&const_OTHER_value, MCDS_OTHER);
	zend_string *const_OTHER_name = zend_string_init_interned("OTHER", sizeof("OTHER") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_OTHER_name, &const_OTHER_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_OTHER_name);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_InternalException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "InternalException", class_Mcds_InternalException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_CallbackFailedException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "CallbackFailedException", class_Mcds_CallbackFailedException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_InvalidKeyException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "InvalidKeyException", class_Mcds_InvalidKeyException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ValueTooLargeException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ValueTooLargeException", class_Mcds_ValueTooLargeException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_InvalidArgumentException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "InvalidArgumentException", class_Mcds_InvalidArgumentException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_NonNumericException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "NonNumericException", class_Mcds_NonNumericException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_CorruptException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "CorruptException", class_Mcds_CorruptException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_LostException(zend_class_entry *class_entry_Mcds_CorruptException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "LostException", class_Mcds_LostException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_CorruptException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_BackendException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "BackendException", class_Mcds_BackendException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_IoException(zend_class_entry *class_entry_Mcds_BackendException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "IoException", class_Mcds_IoException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_BackendException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ServerDownException(zend_class_entry *class_entry_Mcds_BackendException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ServerDownException", class_Mcds_ServerDownException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_BackendException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_TimeoutException(zend_class_entry *class_entry_Mcds_BackendException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "TimeoutException", class_Mcds_TimeoutException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_BackendException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_AmbiguousException(zend_class_entry *class_entry_Mcds_BackendException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "AmbiguousException", class_Mcds_AmbiguousException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_BackendException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_OutOfMemoryException(zend_class_entry *class_entry_Mcds_BackendException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "OutOfMemoryException", class_Mcds_OutOfMemoryException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_BackendException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ServerErrorException(zend_class_entry *class_entry_Mcds_BackendException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ServerErrorException", class_Mcds_ServerErrorException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_BackendException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ProtocolException(zend_class_entry *class_entry_Mcds_BackendException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ProtocolException", class_Mcds_ProtocolException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_BackendException);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_ConflictException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "ConflictException", class_Mcds_ConflictException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_UnsupportedException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "UnsupportedException", class_Mcds_UnsupportedException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_WaitTimeoutException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "WaitTimeoutException", class_Mcds_WaitTimeoutException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}

static zend_class_entry *register_class_Mcds_LockLostException(zend_class_entry *class_entry_Mcds_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "Mcds", "LockLostException", class_Mcds_LockLostException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_Mcds_Exception);

	return class_entry;
}
