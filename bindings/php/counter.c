/* Mcds\Counter: an exact shared counter (mcds_counter_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void counter_free(void *h) { mcds_counter_free(h); }

bool php_mcds_counter_construct(zval *obj, zval *store_zv, zend_string *name)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_counter *c = NULL;
	if (store == NULL || !php_mcds_ok(mcds_counter_new(store, ZSTR_VAL(name), &c))) {
		return false;
	}
	return php_mcds_adopt(obj, c, counter_free, store_zv);
}

ZEND_METHOD(Mcds_Counter, __construct)
{
	zval *store;
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_counter_construct(ZEND_THIS, store, name);
}

static void counter_step(INTERNAL_FUNCTION_PARAMETERS,
	mcds_result (*step)(const mcds_counter *, uint64_t, uint64_t *))
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
	MCDS_GET_THIS(mcds_counter, c);
	MCDS_TRY(step(c, d, &value));
	MCDS_RETURN_U64(value);
}

ZEND_METHOD(Mcds_Counter, incr)
{
	counter_step(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_counter_incr);
}

ZEND_METHOD(Mcds_Counter, decr)
{
	counter_step(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_counter_decr);
}

ZEND_METHOD(Mcds_Counter, get)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter, c);
	uint64_t value = 0;
	MCDS_TRY(mcds_counter_get(c, &value));
	MCDS_RETURN_U64(value);
}
