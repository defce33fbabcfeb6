/* Mcds\ShadowCounter: events in the previous period (mcds_shadow_counter_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void shadow_free(void *h) { mcds_shadow_counter_free(h); }

static bool php_mcds_shadow_counter_construct(zval *obj, zval *store_zv, zend_string *name,
	zend_long period_secs, uint32_t arg)
{
	uint32_t period;
	if (!php_mcds_arg_u32(period_secs, arg, &period)) {
		return false;
	}
	/* 0 goes through: libmcds refuses it with MCDS_INVALID_ARGUMENT. */
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_shadow_counter *c = NULL;
	if (store == NULL || !php_mcds_ok(mcds_shadow_counter_new(store, ZSTR_VAL(name), period, &c))) {
		return false;
	}
	return php_mcds_adopt(obj, c, shadow_free, store_zv);
}

ZEND_METHOD(Mcds_ShadowCounter, __construct)
{
	zval *store;
	zend_string *name;
	zend_long period;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(period)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_shadow_counter_construct(ZEND_THIS, store, name, period, 3);
}

ZEND_METHOD(Mcds_ShadowCounter, incr)
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
	MCDS_GET_THIS(mcds_shadow_counter, c);
	MCDS_TRY(mcds_shadow_counter_incr(c, d, &value));
	MCDS_RETURN_U64_OR_STRING(value);
}

ZEND_METHOD(Mcds_ShadowCounter, value)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_shadow_counter, c);
	uint64_t value = 0;
	MCDS_TRY(mcds_shadow_counter_value(c, &value));
	MCDS_RETURN_U64_OR_STRING(value);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
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
