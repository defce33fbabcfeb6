/* Mcds\Store: memcached or the embedded store (with their options, through
 * mcds_store_builder_*), key prefixes, and the factories of every
 * structure (each forwards to the structure's own constructor). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include "php_mcds.h"
#include "zend_exceptions.h"

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

/* A builder setter's result: a range libmcds refuses is a ValueError for
 * argument `arg`, with libmcds's message; any other error is thrown as
 * usual. */
static bool option_set(mcds_result r, uint32_t arg)
{
	if (r == MCDS_INVALID_ARGUMENT) {
		zend_argument_value_error(arg, "was refused by libmcds: %s", mcds_last_error_message());
		return false;
	}
	return php_mcds_ok(r);
}

/* The longest timeout libmcds accepts: an hour. */
#define MAX_TIMEOUT_SECS 3600

/* A timeout in seconds (0 < t <= an hour) as whole milliseconds, rounded up. */
static bool timeout_ms(double seconds, uint32_t arg, uint32_t *ms)
{
	if (!zend_finite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_SECS) {
		zend_argument_value_error(arg, "must be greater than 0 and at most %d seconds", MAX_TIMEOUT_SECS);
		return false;
	}
	*ms = (uint32_t)ceil(seconds * 1000.0);
	return true;
}

static bool byte_option(const mcds_store_builder *b, zend_long v, uint32_t arg,
	mcds_result (*set)(const mcds_store_builder *, uint64_t))
{
	uint64_t bytes;
	return php_mcds_arg_u64(v, arg, &bytes) && option_set(set(b, bytes), arg);
}

ZEND_METHOD(Mcds_Store, memcached)
{
	char *servers;
	size_t servers_len;
	double connect = 0, io = 0;
	bool connect_null = true, io_null = true, item_null = true;
	zend_long item = 0;
	ZEND_PARSE_PARAMETERS_START(1, 4)
		Z_PARAM_PATH(servers, servers_len)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(connect, connect_null)
		Z_PARAM_DOUBLE_OR_NULL(io, io_null)
		Z_PARAM_LONG_OR_NULL(item, item_null)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t connect_ms = 0, io_ms = 0;
	if ((!connect_null && !timeout_ms(connect, 2, &connect_ms)) || (!io_null && !timeout_ms(io, 3, &io_ms))) {
		RETURN_THROWS();
	}
	mcds_store *store = NULL;
	if (connect_null && io_null && item_null) {
		mcds_result r = mcds_store_new_memcached(servers, &store);
		store_result(return_value, r, store);
		return;
	}
	mcds_store_builder *b = NULL;
	MCDS_TRY(mcds_store_builder_new(&b));
	bool ok = (connect_null || option_set(mcds_store_builder_set_connect_timeout_ms(b, connect_ms), 2))
		&& (io_null || option_set(mcds_store_builder_set_io_timeout_ms(b, io_ms), 3))
		&& (item_null || byte_option(b, item, 4, mcds_store_builder_set_item_size_limit));
	mcds_result r = ok ? mcds_store_builder_build_memcached(b, servers, &store) : MCDS_OK;
	mcds_store_builder_free(b);
	if (!ok) {
		RETURN_THROWS();
	}
	store_result(return_value, r, store);
}

ZEND_METHOD(Mcds_Store, memory)
{
	zend_long memory = 0, item = 0;
	bool evict = true;
	bool memory_null = true, evict_null = true, item_null = true;
	ZEND_PARSE_PARAMETERS_START(0, 3)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG_OR_NULL(memory, memory_null)
		Z_PARAM_BOOL_OR_NULL(evict, evict_null)
		Z_PARAM_LONG_OR_NULL(item, item_null)
	ZEND_PARSE_PARAMETERS_END();
	mcds_store *store = NULL;
	if (memory_null && evict_null && item_null) {
		mcds_result r = mcds_store_new_memory(&store);
		store_result(return_value, r, store);
		return;
	}
	mcds_store_builder *b = NULL;
	MCDS_TRY(mcds_store_builder_new(&b));
	bool ok = (memory_null || byte_option(b, memory, 1, mcds_store_builder_set_memory_limit))
		&& (evict_null || php_mcds_ok(mcds_store_builder_set_evict(b, evict)))
		&& (item_null || byte_option(b, item, 3, mcds_store_builder_set_item_size_limit));
	mcds_result r = ok ? mcds_store_builder_build_memory(b, &store) : MCDS_OK;
	mcds_store_builder_free(b);
	if (!ok) {
		RETURN_THROWS();
	}
	store_result(return_value, r, store);
}

ZEND_METHOD(Mcds_Store, fromUrl)
{
	char *url;
	size_t url_len;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH(url, url_len)
	ZEND_PARSE_PARAMETERS_END();
	mcds_store *store = NULL;
	mcds_result r = mcds_store_new_url(url, &store);
	store_result(return_value, r, store);
}

ZEND_METHOD(Mcds_Store, withPrefix)
{
	char *prefix;
	size_t prefix_len;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH(prefix, prefix_len)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_store, base);
	mcds_store *store = NULL;
	mcds_result r = mcds_store_with_prefix(base, prefix, &store);
	store_result(return_value, r, store);
}

/* Store::update: the PHP callable of one call, called back by libmcds as an
 * mcds_updater on this thread, once per attempt (a lost CAS race calls it
 * again). As with the view counter's loader, nothing may unwind or longjmp
 * over the libmcds frames: an exception stays pending in EG(exception) and
 * the callback fails (nothing is written); a fatal error's bailout is
 * caught here and resumed after libmcds returned. */
typedef struct {
	zval *fn;                    /* the PHP callable */
	zend_fcall_info_cache fcc;   /* as resolved when it was passed */
	bool bailed_out;
} updater_ctx;

static mcds_result call_updater(void *ctx, const uint8_t *current, size_t current_len, bool exists, mcds_update *out)
{
	updater_ctx *c = ctx;
	volatile mcds_result code = MCDS_CALLBACK_FAILED;
	zval rv, arg;
	ZVAL_UNDEF(&rv);
	if (exists) {
		ZVAL_STRINGL(&arg, (const char *)current, current_len);
	} else {
		ZVAL_NULL(&arg);
	}
	zend_try {
		if (php_mcds_call(c->fn, &c->fcc, &arg, 1, &rv) == SUCCESS && EG(exception) == NULL) {
			if (Z_TYPE(rv) == IS_NULL) {
				code = MCDS_OK; /* leave the item as it is */
			} else if (Z_TYPE(rv) == IS_STRING) {
				code = mcds_update_set(out, (const uint8_t *)Z_STRVAL(rv), Z_STRLEN(rv));
			} else {
				zend_type_error("the function passed to Mcds\\Store::update() must return a string (the new value) "
					"or null (leave the item as it is), %s returned", zend_zval_type_name(&rv));
			}
		}
	} zend_catch {
		c->bailed_out = true;
	} zend_end_try();
	if (!c->bailed_out) {
		zval_ptr_dtor(&rv);
	}
	zval_ptr_dtor(&arg);
	return code;
}

ZEND_METHOD(Mcds_Store, update)
{
	char *key;
	size_t key_len;
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	zend_long seconds = 0, max_attempts = 0;
	ZEND_PARSE_PARAMETERS_START(2, 4)
		Z_PARAM_PATH(key, key_len)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(seconds)
		Z_PARAM_LONG(max_attempts)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl, attempts;
	if (!php_mcds_arg_ttl(seconds, 3, &ttl) || !php_mcds_arg_u32(max_attempts, 4, &attempts)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_store, store);
	zval fn;
	/* Kept alive through the call, whatever the function does. */
	ZVAL_COPY(&fn, &fci.function_name);
	updater_ctx ctx = {.fn = &fn, .fcc = fcc, .bailed_out = false};
	bool written = false;
	mcds_result r = mcds_store_update(store, key, ttl, attempts, call_updater, &ctx, &written);
	if (ctx.bailed_out) {
		zend_bailout(); /* the function's fatal error, resumed */
	}
	zval_ptr_dtor(&fn);
	if (r == MCDS_OK) {
		RETURN_BOOL(written);
	}
	if (EG(exception) == NULL) {
		php_mcds_throw(r);
	}
	RETURN_THROWS();
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

ZEND_METHOD(Mcds_Store, counterMap)
{
	zend_string *name;
	zend_long scale = 0;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(scale)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_counter_map_ce, php_mcds_counter_map_construct(return_value, ZEND_THIS, name, scale, 2));
}

ZEND_METHOD(Mcds_Store, lock)
{
	zend_string *name;
	php_mcds_lock_options opts = {.ttl = 30.0};
	bool min_null = true, max_null = true;
	ZEND_PARSE_PARAMETERS_START(1, 6)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(opts.ttl)
		Z_PARAM_BOOL(opts.fencing)
		Z_PARAM_PATH_STR_OR_NULL(opts.owner_label)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_min, min_null)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_max, max_null)
	ZEND_PARSE_PARAMETERS_END();
	opts.backoff_min_set = !min_null;
	opts.backoff_max_set = !max_null;
	MCDS_FACTORY(php_mcds_lock_ce, php_mcds_lock_construct(return_value, ZEND_THIS, name, &opts, 2));
}

ZEND_METHOD(Mcds_Store, shadowCounter)
{
	zend_string *name;
	zend_long period;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(period)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_shadow_counter_ce,
		php_mcds_shadow_counter_construct(return_value, ZEND_THIS, name, period, 2));
}

ZEND_METHOD(Mcds_Store, viewCounter)
{
	zend_string *name;
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	zend_long ttl = 0;
	ZEND_PARSE_PARAMETERS_START(2, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(ttl)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_view_counter_ce,
		php_mcds_view_counter_construct(return_value, ZEND_THIS, name, &fci, &fcc, ttl, 3));
}

ZEND_METHOD(Mcds_Store, shardedSet)
{
	zend_string *name;
	zend_long shards;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(shards)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_sharded_set_ce,
		php_mcds_sharded_set_construct(return_value, ZEND_THIS, name, shards, 2));
}

ZEND_METHOD(Mcds_Store, intArray)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_int_array_ce, php_mcds_int_array_construct(return_value, ZEND_THIS, name));
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

ZEND_METHOD(Mcds_Store, kv)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_FACTORY(php_mcds_kv_ce, php_mcds_kv_construct(return_value, ZEND_THIS));
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

ZEND_METHOD(Mcds_Store, timeSeries)
{
	zend_string *name;
	HashTable *resolutions;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_ARRAY_HT(resolutions)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_timeseries_ce,
		php_mcds_timeseries_construct(return_value, ZEND_THIS, name, resolutions, 2));
}

ZEND_METHOD(Mcds_Store, packedSeries)
{
	zend_string *name;
	zend_long slot_ms, slots, width, retention_ms;
	ZEND_PARSE_PARAMETERS_START(5, 5)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(slot_ms)
		Z_PARAM_LONG(slots)
		Z_PARAM_LONG(width)
		Z_PARAM_LONG(retention_ms)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_packed_series_ce,
		php_mcds_packed_series_construct(return_value, ZEND_THIS, name, slot_ms, slots, width, retention_ms, 2));
}

ZEND_METHOD(Mcds_Store, leaderboard)
{
	zend_string *name;
	zend_long capacity;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(capacity)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_leaderboard_ce,
		php_mcds_leaderboard_construct(return_value, ZEND_THIS, name, capacity, 2));
}

ZEND_METHOD(Mcds_Store, scalableBloomFilter)
{
	zend_string *name;
	zend_long initial_capacity;
	double error_rate;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(initial_capacity)
		Z_PARAM_DOUBLE(error_rate)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_scalable_bloom_ce,
		php_mcds_scalable_bloom_construct(return_value, ZEND_THIS, name, initial_capacity, error_rate, 2));
}
