/* Mcds\CounterMap: named signed counters, HINCRBY and HINCRBYFLOAT without
 * float drift (mcds_counter_map_*). Decimals cross as strings, exactly. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"
#include "zend_exceptions.h"

static void counter_map_free(void *h) { mcds_counter_map_free(h); }

static bool php_mcds_counter_map_construct(zval *obj, zval *store_zv, zend_string *name, zend_long scale, uint32_t arg)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	uint32_t places;
	if (store == NULL || !php_mcds_arg_u32(scale, arg, &places)) {
		return false;
	}
	mcds_counter_map *plain = NULL, *m = NULL;
	if (!php_mcds_ok(mcds_counter_map_new(store, ZSTR_VAL(name), &plain))) {
		return false;
	}
	mcds_result r = places == 0 ? MCDS_OK : mcds_counter_map_with_scale(plain, places, &m);
	if (places == 0) {
		m = plain;
	} else {
		mcds_counter_map_free(plain);
	}
	if (!php_mcds_ok(r)) {
		return false;
	}
	return php_mcds_adopt(obj, m, counter_map_free, store_zv);
}

ZEND_METHOD(Mcds_CounterMap, __construct)
{
	zval *store;
	zend_string *name;
	zend_long scale = 0;
	ZEND_PARSE_PARAMETERS_START(2, 3)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(scale)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_counter_map_construct(ZEND_THIS, store, name, scale, 3);
}

#define FIELD(s) (const uint8_t *)ZSTR_VAL(s), ZSTR_LEN(s)

/* A string from libmcds as the PHP return value, freed. */
static void return_text(zval *return_value, char *s)
{
	RETVAL_STRING(s);
	mcds_string_free(s);
}

ZEND_METHOD(Mcds_CounterMap, withScale)
{
	zend_long places;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(places)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t p;
	if (!php_mcds_arg_u32(places, 1, &p)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_counter_map, m);
	mcds_counter_map *derived = NULL;
	MCDS_TRY(mcds_counter_map_with_scale(m, p, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, counter_map_free);
}

ZEND_METHOD(Mcds_CounterMap, name)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	char *name = NULL;
	MCDS_TRY(mcds_counter_map_name(m, &name));
	return_text(return_value, name);
}

ZEND_METHOD(Mcds_CounterMap, scale)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	uint32_t places = 0;
	MCDS_TRY(mcds_counter_map_scale(m, &places));
	RETURN_LONG((zend_long)places);
}

ZEND_METHOD(Mcds_CounterMap, registryKey)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	char *key = NULL;
	MCDS_TRY(mcds_counter_map_registry_key(m, &key));
	return_text(return_value, key);
}

ZEND_METHOD(Mcds_CounterMap, fieldKey)
{
	zend_string *field;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(field)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_counter_map, m);
	char *key = NULL;
	MCDS_TRY(mcds_counter_map_field_key(m, FIELD(field), &key));
	return_text(return_value, key);
}

ZEND_METHOD(Mcds_CounterMap, incr)
{
	zend_string *field;
	zend_long by = 1;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(field)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(by)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_counter_map, m);
	int64_t value = 0;
	MCDS_TRY(mcds_counter_map_incr(m, FIELD(field), (int64_t)by, &value));
	RETURN_LONG((zend_long)value);
}

ZEND_METHOD(Mcds_CounterMap, incrDecimal)
{
	zend_string *field, *amount;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(field)
		Z_PARAM_PATH_STR(amount) /* NUL-terminated for libmcds: no NUL inside */
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_counter_map, m);
	char *value = NULL;
	MCDS_TRY(mcds_counter_map_incr_decimal(m, FIELD(field), ZSTR_VAL(amount), &value));
	return_text(return_value, value);
}

ZEND_METHOD(Mcds_CounterMap, incrF64)
{
	zend_string *field;
	double amount;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(field)
		Z_PARAM_DOUBLE(amount)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_counter_map, m);
	char *value = NULL;
	MCDS_TRY(mcds_counter_map_incr_f64(m, FIELD(field), amount, &value));
	return_text(return_value, value);
}

ZEND_METHOD(Mcds_CounterMap, get)
{
	zend_string *field;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(field)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_counter_map, m);
	int64_t value = 0;
	MCDS_TRY(mcds_counter_map_get(m, FIELD(field), &value));
	RETURN_LONG((zend_long)value);
}

ZEND_METHOD(Mcds_CounterMap, getDecimal)
{
	zend_string *field;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(field)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_counter_map, m);
	char *value = NULL;
	MCDS_TRY(mcds_counter_map_get_decimal(m, FIELD(field), &value));
	return_text(return_value, value);
}

/* field => value from the two parallel arrays (freed here); a field such as
 * "42" becomes the int key 42, as in any PHP array. */
static bool combine(zval *fields, zval *values, zval *rv)
{
	uint32_t n = zend_hash_num_elements(Z_ARRVAL_P(fields));
	if (n != zend_hash_num_elements(Z_ARRVAL_P(values))) { /* libmcds promises the same length */
		zval_ptr_dtor(fields);
		zval_ptr_dtor(values);
		zend_throw_exception(php_mcds_exception_class(MCDS_INTERNAL),
			"mcds_counter_map_get_all returned lists of different lengths", MCDS_INTERNAL);
		return false;
	}
	array_init_size(rv, n);
	for (uint32_t i = 0; i < n; i++) {
		zval *field = zend_hash_index_find(Z_ARRVAL_P(fields), i);
		zval *value = zend_hash_index_find(Z_ARRVAL_P(values), i);
		Z_TRY_ADDREF_P(value);
		zend_symtable_update(Z_ARRVAL_P(rv), Z_STR_P(field), value);
	}
	zval_ptr_dtor(fields);
	zval_ptr_dtor(values);
	return true;
}

ZEND_METHOD(Mcds_CounterMap, getAll)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	mcds_bytes_list *fields = NULL;
	mcds_int_list *values = NULL;
	MCDS_TRY(mcds_counter_map_get_all(m, &fields, &values));
	zval f, v;
	if (!php_mcds_bytes_list_to_array(fields, &f)) { /* frees the list */
		mcds_int_list_free(values);
		RETURN_THROWS();
	}
	const int64_t *data = NULL;
	uintptr_t len = 0;
	mcds_result r = mcds_int_list_data(values, &data, &len);
	if (r != MCDS_OK) {
		php_mcds_throw(r);
		mcds_int_list_free(values);
		zval_ptr_dtor(&f);
		RETURN_THROWS();
	}
	array_init_size(&v, (uint32_t)MIN(len, UINT32_MAX));
	for (uintptr_t i = 0; i < len; i++) {
		add_next_index_long(&v, (zend_long)data[i]);
	}
	mcds_int_list_free(values);
	if (!combine(&f, &v, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_CounterMap, getAllDecimal)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	mcds_bytes_list *fields = NULL, *values = NULL;
	MCDS_TRY(mcds_counter_map_get_all_decimal(m, &fields, &values));
	zval f, v;
	/* Each converter frees its list, whatever happens. */
	if (!php_mcds_bytes_list_to_array(fields, &f)) {
		mcds_bytes_list_free(values);
		RETURN_THROWS();
	}
	if (!php_mcds_bytes_list_to_array(values, &v)) {
		zval_ptr_dtor(&f);
		RETURN_THROWS();
	}
	if (!combine(&f, &v, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_CounterMap, fields)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	mcds_bytes_list *list = NULL;
	MCDS_TRY(mcds_counter_map_fields(m, &list));
	if (!php_mcds_bytes_list_to_array(list, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_CounterMap, len)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	uintptr_t n = 0;
	MCDS_TRY(mcds_counter_map_len(m, &n));
	MCDS_RETURN_U64((uint64_t)n);
}

ZEND_METHOD(Mcds_CounterMap, isEmpty)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter_map, m);
	bool empty = false;
	MCDS_TRY(mcds_counter_map_is_empty(m, &empty));
	RETURN_BOOL(empty);
}

ZEND_METHOD(Mcds_CounterMap, remove)
{
	zend_string *field;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(field)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_counter_map, m);
	bool existed = false;
	MCDS_TRY(mcds_counter_map_remove(m, FIELD(field), &existed));
	RETURN_BOOL(existed);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
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
