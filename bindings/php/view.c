/*
 * Mcds\ViewCounter: a view counter whose total lives elsewhere, seeded by a
 * PHP callable (mcds_view_counter_*, with an mcds_loader).
 *
 * libmcds calls the loader through call_loader on this thread, during
 * mcds_view_counter_view/_get, at most once per call. call_loader runs the
 * PHP callable with zend_call_function and must return normally (the
 * mcds_loader contract: nothing may unwind or longjmp over the libmcds
 * frames below it), so:
 *
 * - a PHP exception (or exit(), which unwinds as one) stays pending and the
 *   callback returns MCDS_CALLBACK_FAILED: libmcds counts and caches
 *   nothing and fails the call with MCDS_CALLBACK_FAILED, and the method
 *   then returns with the loader's own exception, untouched;
 * - a fatal error (zend_bailout: memory exhausted, max_execution_time) is
 *   caught by zend_try in call_loader, the callback fails, and the method
 *   resumes the bailout with zend_bailout() once libmcds has returned.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "php_mcds.h"
#include "zend_exceptions.h"

static void view_free(void *h) { mcds_view_counter_free(h); }

static bool php_mcds_view_counter_construct(zval *obj, zval *store_zv, zend_string *name,
	zend_fcall_info *loader, zend_fcall_info_cache *loader_fcc, zend_long ttl, uint32_t arg)
{
	uint32_t ttl_secs;
	if (!php_mcds_arg_u32(ttl, arg, &ttl_secs)) {
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_view_counter *c = NULL;
	if (store == NULL || !php_mcds_ok(mcds_view_counter_new(store, ZSTR_VAL(name), ttl_secs, &c))) {
		return false;
	}
	if (!php_mcds_adopt(obj, c, view_free, store_zv)) {
		return false;
	}
	/* The callable, and what it was resolved to in the caller's scope (so a
	 * private method of the caller's class stays callable later); the zval
	 * keeps the closure or object the cache points into alive. */
	php_mcds_object *o = Z_MCDS_P(obj);
	ZVAL_COPY(&o->callable, &loader->function_name);
	o->fcc = *loader_fcc;
	return true;
}

ZEND_METHOD(Mcds_ViewCounter, __construct)
{
	zval *store;
	zend_string *name;
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	zend_long ttl = 0;
	ZEND_PARSE_PARAMETERS_START(3, 4)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(ttl)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_view_counter_construct(ZEND_THIS, store, name, &fci, &fcc, ttl, 4);
}

typedef struct {
	zval *loader;                /* the PHP callable */
	zend_fcall_info_cache fcc;   /* as resolved when it was passed */
	bool bailed_out;             /* it raised a fatal error: resume the bailout after */
} loader_ctx;

/* The loader's return value as the stored total: an int >= 0, a string of
 * one (PDO returns numbers as strings), or null for 0. Else an Error. */
static bool loader_total(zval *rv, uint64_t *out)
{
	zend_long v = 0;
	ZVAL_DEREF(rv);
	switch (Z_TYPE_P(rv)) {
	case IS_NULL:
		*out = 0;
		return true;
	case IS_LONG:
		v = Z_LVAL_P(rv);
		break;
	case IS_STRING: {
		/* Past PHP_INT_MAX a total is a string of digits (as view() and
		 * get() return it, and PDO a BIGINT UNSIGNED): up to 2^64 - 1. */
		const char *digits = Z_STRVAL_P(rv);
		size_t len = Z_STRLEN_P(rv);
		if (len > 0 && len <= 20 && strspn(digits, "0123456789") == len) {
			errno = 0;
			char *end = NULL;
			unsigned long long big = strtoull(digits, &end, 10);
			if (errno == 0 && end == digits + len) {
				*out = (uint64_t)big;
				return true;
			}
		}
		if (is_numeric_string(Z_STRVAL_P(rv), Z_STRLEN_P(rv), &v, NULL, false) != IS_LONG) {
			zend_type_error("the loader of Mcds\\ViewCounter must return an int (the stored total), "
				"string \"%s\" returned", Z_STRVAL_P(rv));
			return false;
		}
		break;
	}
	default:
		zend_type_error("the loader of Mcds\\ViewCounter must return an int (the stored total), %s returned",
			zend_zval_type_name(rv));
		return false;
	}
	if (v < 0) {
		zend_value_error("the loader of Mcds\\ViewCounter must return a total >= 0, " ZEND_LONG_FMT " returned", v);
		return false;
	}
	*out = (uint64_t)v;
	return true;
}

/* The mcds_loader: returns normally whatever the PHP callable does. */
static mcds_result call_loader(void *ctx, uint64_t *out_value)
{
	loader_ctx *c = ctx;
	volatile mcds_result code = MCDS_CALLBACK_FAILED;
	zval rv;
	ZVAL_UNDEF(&rv);
	zend_try {
		if (php_mcds_call(c->loader, &c->fcc, NULL, 0, &rv) == SUCCESS && EG(exception) == NULL
			&& loader_total(&rv, out_value)) {
			code = MCDS_OK;
		}
	} zend_catch {
		c->bailed_out = true;
	} zend_end_try();
	if (!c->bailed_out) {
		zval_ptr_dtor(&rv);
	}
	return code;
}

/* Run a view counter call with this object's loader, then return its
 * value or throw: the loader's exception as it was, else the error of r. */
#define VIEW_CALL(call_with_ctx)                                                   \
	do {                                                                           \
		php_mcds_object *self_ = Z_MCDS_P(ZEND_THIS);                              \
		zval loader;                                                               \
		/* Kept alive through the call, whatever the loader does. */               \
		ZVAL_COPY(&loader, &self_->callable);                                      \
		loader_ctx ctx = {.loader = &loader, .fcc = self_->fcc, .bailed_out = false}; \
		uint64_t value = 0;                                                        \
		mcds_result r = (call_with_ctx);                                           \
		if (ctx.bailed_out) {                                                      \
			zend_bailout(); /* the loader's fatal error, resumed */                \
		}                                                                          \
		zval_ptr_dtor(&loader);                                                    \
		if (r == MCDS_OK) {                                                        \
			MCDS_RETURN_U64_OR_STRING(value);                                                \
		}                                                                          \
		if (EG(exception) == NULL) {                                               \
			php_mcds_throw(r);                                                     \
		}                                                                          \
		RETURN_THROWS();                                                           \
	} while (0)

ZEND_METHOD(Mcds_ViewCounter, view)
{
	zend_long delta = 1;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(delta)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t d;
	if (!php_mcds_arg_u64(delta, 1, &d)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_view_counter, c);
	VIEW_CALL(mcds_view_counter_view(c, d, call_loader, &ctx, &value));
}

ZEND_METHOD(Mcds_ViewCounter, get)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_view_counter, c);
	VIEW_CALL(mcds_view_counter_get(c, call_loader, &ctx, &value));
}

ZEND_METHOD(Mcds_ViewCounter, invalidate)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_view_counter, c);
	MCDS_TRY(mcds_view_counter_invalidate(c));
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
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
