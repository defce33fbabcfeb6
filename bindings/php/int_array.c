/* Mcds\IntArray: a set of 64-bit integers (mcds_int_array_*, mcds_int_list_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void int_array_free(void *h) { mcds_int_array_free(h); }

static bool php_mcds_int_array_construct(zval *obj, zval *store_zv, zend_string *name)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_int_array *a = NULL;
	if (store == NULL || !php_mcds_ok(mcds_int_array_new(store, ZSTR_VAL(name), &a))) {
		return false;
	}
	return php_mcds_adopt(obj, a, int_array_free, store_zv);
}

ZEND_METHOD(Mcds_IntArray, __construct)
{
	zval *store;
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_int_array_construct(ZEND_THIS, store, name);
}

/* add/remove of the variadic int arguments, in one call. */
static void int_array_many(INTERNAL_FUNCTION_PARAMETERS,
	mcds_result (*many)(const mcds_int_array *, const int64_t *, uintptr_t))
{
	zval *args = NULL;
	uint32_t argc = 0;
	ZEND_PARSE_PARAMETERS_START(0, -1)
		Z_PARAM_VARIADIC('*', args, argc)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_int_array, a);
	/* Never NULL, even for none. */
	int64_t *values = safe_emalloc(argc ? argc : 1, sizeof(*values), 0);
	for (uint32_t i = 0; i < argc; i++) {
		zend_long v;
		/* Internal functions check their own variadic argument types, here
		 * as an int parameter would be (the caller's strict_types). */
		if (!zend_parse_arg_long(&args[i], &v, NULL, false, i + 1)) {
			if (!EG(exception)) {
				zend_argument_type_error(i + 1, "must be of type int, %s given", zend_zval_type_name(&args[i]));
			}
			efree(values);
			RETURN_THROWS();
		}
		values[i] = (int64_t)v;
	}
	mcds_result r = many(a, values, argc);
	efree(values);
	MCDS_TRY(r);
}

ZEND_METHOD(Mcds_IntArray, add)
{
	int_array_many(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_int_array_add);
}

ZEND_METHOD(Mcds_IntArray, remove)
{
	int_array_many(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_int_array_remove);
}

ZEND_METHOD(Mcds_IntArray, contains)
{
	zend_long value;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(value)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_int_array, a);
	bool found = false;
	MCDS_TRY(mcds_int_array_contains(a, (int64_t)value, &found));
	RETURN_BOOL(found);
}

ZEND_METHOD(Mcds_IntArray, members)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_int_array, a);
	mcds_int_list *list = NULL;
	MCDS_TRY(mcds_int_array_members(a, &list));
	const int64_t *data = NULL;
	uintptr_t len = 0;
	mcds_result r = mcds_int_list_data(list, &data, &len);
	if (r != MCDS_OK) {
		php_mcds_throw(r);
		mcds_int_list_free(list);
		RETURN_THROWS();
	}
	array_init_size(return_value, (uint32_t)MIN(len, UINT32_MAX));
	for (uintptr_t i = 0; i < len; i++) {
		add_next_index_long(return_value, (zend_long)data[i]);
	}
	mcds_int_list_free(list);
}

ZEND_METHOD(Mcds_IntArray, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_int_array, a);
	MCDS_TRY(mcds_int_array_clear(a));
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, intArray)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_int_array_ce, php_mcds_int_array_construct(return_value, ZEND_THIS, name));
}
