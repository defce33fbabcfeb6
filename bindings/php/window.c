/* Mcds\WindowCounter: a sliding-window counter (mcds_window_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void window_free(void *h) { mcds_window_free(h); }

static bool php_mcds_window_construct(zval *obj, zval *store_zv, zend_string *name, zend_long slot_secs,
	zend_long slots, uint32_t arg)
{
	uint32_t s, n;
	if (!php_mcds_arg_u32(slot_secs, arg, &s) || !php_mcds_arg_u32(slots, arg + 1, &n)) {
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_window *w = NULL;
	if (store == NULL || !php_mcds_ok(mcds_window_new(store, ZSTR_VAL(name), s, n, &w))) {
		return false;
	}
	return php_mcds_adopt(obj, w, window_free, store_zv);
}

ZEND_METHOD(Mcds_WindowCounter, __construct)
{
	zval *store;
	zend_string *name;
	zend_long slot_secs, slots;
	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(slot_secs)
		Z_PARAM_LONG(slots)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_window_construct(ZEND_THIS, store, name, slot_secs, slots, 3);
}

ZEND_METHOD(Mcds_WindowCounter, incr)
{
	zend_long delta = 1;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(delta)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t d, value = 0;
	if (!php_mcds_arg_u64(delta, 1, &d)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_window, w);
	MCDS_TRY(mcds_window_incr(w, d, &value));
	MCDS_RETURN_U64_OR_STRING(value);
}

ZEND_METHOD(Mcds_WindowCounter, value)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_window, w);
	uint64_t value = 0;
	MCDS_TRY(mcds_window_value(w, &value));
	MCDS_RETURN_U64_OR_STRING(value);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
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
