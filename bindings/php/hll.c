/* Mcds\HyperLogLog: distinct counting (mcds_hll_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void hll_free(void *h) { mcds_hll_free(h); }

bool php_mcds_hll_construct(zval *obj, zval *store_zv, zend_string *name)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_hll *h = NULL;
	if (store == NULL || !php_mcds_ok(mcds_hll_new(store, ZSTR_VAL(name), &h))) {
		return false;
	}
	return php_mcds_adopt(obj, h, hll_free, store_zv);
}

ZEND_METHOD(Mcds_HyperLogLog, __construct)
{
	zval *store;
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_hll_construct(ZEND_THIS, store, name);
}

ZEND_METHOD(Mcds_HyperLogLog, add)
{
	zend_string *element;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(element)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_hll, h);
	bool changed = false;
	MCDS_TRY(mcds_hll_add(h, (const uint8_t *)ZSTR_VAL(element), ZSTR_LEN(element), &changed));
	RETURN_BOOL(changed);
}

ZEND_METHOD(Mcds_HyperLogLog, count)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_hll, h);
	uint64_t n = 0;
	MCDS_TRY(mcds_hll_count(h, &n));
	MCDS_RETURN_U64(n);
}

ZEND_METHOD(Mcds_HyperLogLog, merge)
{
	zval *args = NULL;
	uint32_t argc = 0;
	ZEND_PARSE_PARAMETERS_START(0, -1)
		Z_PARAM_VARIADIC('*', args, argc)
	ZEND_PARSE_PARAMETERS_END();
	/* Internal functions check their own argument types: zpp has no
	 * variadic-of-class specifier. */
	for (uint32_t i = 0; i < argc; i++) {
		if (Z_TYPE(args[i]) != IS_OBJECT || !instanceof_function(Z_OBJCE(args[i]), php_mcds_hll_ce)) {
			zend_argument_type_error(i + 1, "must be of type Mcds\\HyperLogLog, %s given",
				zend_zval_type_name(&args[i]));
			RETURN_THROWS();
		}
	}
	MCDS_GET_THIS(mcds_hll, target);
	/* Never NULL, even for no sources. */
	const mcds_hll **sources = safe_emalloc(argc ? argc : 1, sizeof(*sources), 0);
	for (uint32_t i = 0; i < argc; i++) {
		sources[i] = php_mcds_this_handle(&args[i]);
		if (sources[i] == NULL) {
			efree(sources);
			RETURN_THROWS();
		}
	}
	mcds_result r = mcds_hll_merge(target, sources, argc);
	efree(sources);
	MCDS_TRY(r);
}
