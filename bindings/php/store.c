/* Mcds\Store: memcached or the embedded store, and the factories of every
 * structure (each forwards to the structure's own constructor). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void store_free(void *h) { mcds_store_free(h); }

/* `r` must be evaluated before `store` is read: the caller makes the call
 * first (C leaves the order of arguments' evaluation open). */
static void store_result(zval *return_value, mcds_result r, mcds_store *store)
{
	if (!php_mcds_ok(r)) {
		return;
	}
	object_init_ex(return_value, php_mcds_store_ce);
	php_mcds_adopt(return_value, store, store_free, NULL);
}

ZEND_METHOD(Mcds_Store, __construct)
{
	ZEND_PARSE_PARAMETERS_NONE();
}

ZEND_METHOD(Mcds_Store, memcached)
{
	char *servers;
	size_t servers_len;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH(servers, servers_len)
	ZEND_PARSE_PARAMETERS_END();
	mcds_store *store = NULL;
	mcds_result r = mcds_store_new_memcached(servers, &store);
	store_result(return_value, r, store);
}

ZEND_METHOD(Mcds_Store, memory)
{
	ZEND_PARSE_PARAMETERS_NONE();
	mcds_store *store = NULL;
	mcds_result r = mcds_store_new_memory(&store);
	store_result(return_value, r, store);
}

/* object_init_ex + a constructor; on failure the half-made object goes. */
#define MCDS_FACTORY(ce, call)                                   \
	do {                                                         \
		object_init_ex(return_value, (ce));                      \
		if (!(call)) {                                           \
			zval_ptr_dtor(return_value);                         \
			ZVAL_NULL(return_value);                             \
			RETURN_THROWS();                                     \
		}                                                        \
	} while (0)

ZEND_METHOD(Mcds_Store, counter)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_counter_ce, php_mcds_counter_construct(return_value, ZEND_THIS, name));
}

ZEND_METHOD(Mcds_Store, lock)
{
	zend_string *name;
	double ttl = 30.0;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(ttl)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_lock_ce, php_mcds_lock_construct(return_value, ZEND_THIS, name, ttl, 2));
}

ZEND_METHOD(Mcds_Store, set)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_set_ce, php_mcds_set_construct(return_value, ZEND_THIS, name));
}

ZEND_METHOD(Mcds_Store, windowCounter)
{
	zend_string *name;
	zend_long slot_secs, slots;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(slot_secs)
		Z_PARAM_LONG(slots)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_window_ce,
		php_mcds_window_construct(return_value, ZEND_THIS, name, slot_secs, slots, 2));
}

ZEND_METHOD(Mcds_Store, rateLimiter)
{
	zend_string *name;
	zend_long limit, window_secs;
	bool sliding = false;
	ZEND_PARSE_PARAMETERS_START(3, 4)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(limit)
		Z_PARAM_LONG(window_secs)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(sliding)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_limiter_ce,
		php_mcds_limiter_construct(return_value, ZEND_THIS, name, limit, window_secs, sliding, 2));
}

ZEND_METHOD(Mcds_Store, eventLog)
{
	zend_string *name;
	zend_long chunk_secs, chunks;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(chunk_secs)
		Z_PARAM_LONG(chunks)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_log_ce,
		php_mcds_log_construct(return_value, ZEND_THIS, name, chunk_secs, chunks, 2));
}

ZEND_METHOD(Mcds_Store, table)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_table_ce, php_mcds_table_construct(return_value, ZEND_THIS, name));
}

ZEND_METHOD(Mcds_Store, hyperLogLog)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_hll_ce, php_mcds_hll_construct(return_value, ZEND_THIS, name));
}

ZEND_METHOD(Mcds_Store, bloomFilter)
{
	zend_string *name;
	zend_long expected;
	double fp_rate;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(expected)
		Z_PARAM_DOUBLE(fp_rate)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_bloom_ce,
		php_mcds_bloom_construct(return_value, ZEND_THIS, name, expected, fp_rate, 2));
}

ZEND_METHOD(Mcds_Store, activityBitmap)
{
	zend_string *name;
	zend_long start_secs, unit_ms;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(start_secs)
		Z_PARAM_LONG(unit_ms)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_bitmap_ce,
		php_mcds_bitmap_construct(return_value, ZEND_THIS, name, start_secs, unit_ms, 2));
}
