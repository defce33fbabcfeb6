/* Mcds\RateLimiter and its answer, Mcds\Decision (mcds_limiter_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void limiter_free(void *h) { mcds_limiter_free(h); }

static bool php_mcds_limiter_construct(zval *obj, zval *store_zv, zend_string *name, zend_long limit,
	zend_long window_secs, bool sliding, uint32_t arg)
{
	uint64_t l;
	uint32_t w;
	if (!php_mcds_arg_u64(limit, arg, &l) || !php_mcds_arg_u32(window_secs, arg + 1, &w)) {
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_limiter *h = NULL;
	if (store == NULL || !php_mcds_ok(mcds_limiter_new(store, ZSTR_VAL(name), l, w, sliding, &h))) {
		return false;
	}
	return php_mcds_adopt(obj, h, limiter_free, store_zv);
}

ZEND_METHOD(Mcds_RateLimiter, __construct)
{
	zval *store;
	zend_string *name;
	zend_long limit, window_secs;
	bool sliding = false;
	ZEND_PARSE_PARAMETERS_START(4, 5)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(limit)
		Z_PARAM_LONG(window_secs)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(sliding)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_limiter_construct(ZEND_THIS, store, name, limit, window_secs, sliding, 3);
}

/* A Mcds\Decision with its three readonly properties set. */
static bool decision_result(const mcds_decision *d, zval *rv)
{
	zval remaining, retry;
	if (!php_mcds_u64_result(d->remaining, &remaining)
		|| !php_mcds_u64_result(d->retry_after_ms, &retry)) {
		return false;
	}
	object_init_ex(rv, php_mcds_decision_ce);
	zend_object *obj = Z_OBJ_P(rv);
	zend_update_property_bool(php_mcds_decision_ce, obj, "allowed", sizeof("allowed") - 1, d->allowed);
	zend_update_property(php_mcds_decision_ce, obj, "remaining", sizeof("remaining") - 1, &remaining);
	zend_update_property(php_mcds_decision_ce, obj, "retryAfterMs", sizeof("retryAfterMs") - 1, &retry);
	return true;
}

static void limiter_decide(INTERNAL_FUNCTION_PARAMETERS,
	mcds_result (*decide)(const mcds_limiter *, mcds_decision *))
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_limiter, l);
	mcds_decision d = {0};
	MCDS_TRY(decide(l, &d));
	if (!decision_result(&d, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_RateLimiter, check)
{
	limiter_decide(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_limiter_check);
}

ZEND_METHOD(Mcds_RateLimiter, peek)
{
	limiter_decide(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_limiter_peek);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
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
