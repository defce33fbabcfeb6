/* Mcds\ActivityBitmap: one bit per time unit (mcds_bitmap_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <time.h>
#include "php_mcds.h"

static void bitmap_free(void *h) { mcds_bitmap_free(h); }

static bool php_mcds_bitmap_construct(zval *obj, zval *store_zv, zend_string *name, zend_long start_secs,
	zend_long unit_ms, uint32_t arg)
{
	uint64_t s, u;
	if (!php_mcds_arg_u64(start_secs, arg, &s) || !php_mcds_arg_u64(unit_ms, arg + 1, &u)) {
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_bitmap *b = NULL;
	if (store == NULL || !php_mcds_ok(mcds_bitmap_new(store, ZSTR_VAL(name), s, u, &b))) {
		return false;
	}
	return php_mcds_adopt(obj, b, bitmap_free, store_zv);
}

ZEND_METHOD(Mcds_ActivityBitmap, __construct)
{
	zval *store;
	zend_string *name;
	zend_long start_secs, unit_ms;
	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(start_secs)
		Z_PARAM_LONG(unit_ms)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_bitmap_construct(ZEND_THIS, store, name, start_secs, unit_ms, 3);
}

ZEND_METHOD(Mcds_ActivityBitmap, set)
{
	zend_long index;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(index)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t i;
	if (!php_mcds_arg_u64(index, 1, &i)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_bitmap, b);
	bool previous = false;
	MCDS_TRY(mcds_bitmap_set(b, i, &previous));
	RETURN_BOOL(previous);
}

ZEND_METHOD(Mcds_ActivityBitmap, mark)
{
	zend_long at = 0;
	bool at_is_null = true;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG_OR_NULL(at, at_is_null)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t at_ms;
	if (at_is_null) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		at_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	} else if (!php_mcds_arg_u64(at, 1, &at_ms)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_bitmap, b);
	bool previous = false;
	MCDS_TRY(mcds_bitmap_mark(b, at_ms, &previous));
	RETURN_BOOL(previous);
}

ZEND_METHOD(Mcds_ActivityBitmap, get)
{
	zend_long index;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(index)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t i;
	if (!php_mcds_arg_u64(index, 1, &i)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_bitmap, b);
	bool bit = false;
	MCDS_TRY(mcds_bitmap_get(b, i, &bit));
	RETURN_BOOL(bit);
}

ZEND_METHOD(Mcds_ActivityBitmap, count)
{
	zend_long first, last;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(first)
		Z_PARAM_LONG(last)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t f, l;
	if (!php_mcds_arg_u64(first, 1, &f) || !php_mcds_arg_u64(last, 2, &l)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_bitmap, b);
	uint64_t n = 0;
	MCDS_TRY(mcds_bitmap_count(b, f, l, &n));
	MCDS_RETURN_U64(n);
}

ZEND_METHOD(Mcds_ActivityBitmap, withTtl)
{
	zend_long seconds;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl;
	if (!php_mcds_arg_ttl(seconds, 1, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_bitmap, b);
	mcds_bitmap *derived = NULL;
	MCDS_TRY(mcds_bitmap_with_ttl(b, ttl, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, bitmap_free);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
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
