/* Mcds\KeyValue: plain key/value on a store (mcds_store_get, _set, _add,
 * _delete, _incr, _incr_or_init), as php-memcached has it; $store->kv().
 * It borrows the store's handle and holds the store object, so the handle
 * lives as long as it does. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"
#include "zend_exceptions.h"

/* The handle is the store's: freed with the store, not here. */
static void kv_keep(void *h) { (void)h; }

static bool php_mcds_kv_construct(zval *obj, zval *store_zv)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	if (store == NULL) {
		return false;
	}
	return php_mcds_adopt(obj, (void *)store, kv_keep, store_zv);
}

ZEND_METHOD(Mcds_KeyValue, __construct)
{
	zval *store;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_kv_construct(ZEND_THIS, store);
}

#define BYTES(s) (const uint8_t *)ZSTR_VAL(s), ZSTR_LEN(s)

ZEND_METHOD(Mcds_KeyValue, get)
{
	zend_string *key;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(key)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_store, s);
	mcds_bytes_list *value = NULL;
	MCDS_TRY(mcds_store_get(s, BYTES(key), &value));
	if (!php_mcds_optional_bytes(value, "mcds_store_get", return_value)) {
		RETURN_THROWS();
	}
}

/* set() and add(): the key, the value and the TTL in whole seconds (0:
 * never expires). */
static bool kv_write_args(INTERNAL_FUNCTION_PARAMETERS, zend_string **key, zend_string **value, uint32_t *ttl)
{
	zend_long seconds = 0;
	ZEND_PARSE_PARAMETERS_START_EX(ZEND_PARSE_PARAMS_THROW, 2, 3)
		Z_PARAM_STR(*key)
		Z_PARAM_STR(*value)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END_EX(return false);
	return php_mcds_arg_ttl(seconds, 3, ttl);
}

ZEND_METHOD(Mcds_KeyValue, set)
{
	zend_string *key, *value;
	uint32_t ttl;
	if (!kv_write_args(INTERNAL_FUNCTION_PARAM_PASSTHRU, &key, &value, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_store, s);
	MCDS_TRY(mcds_store_set(s, BYTES(key), BYTES(value), ttl));
}

ZEND_METHOD(Mcds_KeyValue, add)
{
	zend_string *key, *value;
	uint32_t ttl;
	if (!kv_write_args(INTERNAL_FUNCTION_PARAM_PASSTHRU, &key, &value, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_store, s);
	bool added = false;
	MCDS_TRY(mcds_store_add(s, BYTES(key), BYTES(value), ttl, &added));
	RETURN_BOOL(added);
}

ZEND_METHOD(Mcds_KeyValue, delete)
{
	zend_string *key;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(key)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_store, s);
	bool existed = false;
	MCDS_TRY(mcds_store_delete(s, BYTES(key), &existed));
	RETURN_BOOL(existed);
}

ZEND_METHOD(Mcds_KeyValue, incr)
{
	zend_string *key;
	zend_long delta = 1, initial = 0, seconds = 0;
	bool initial_is_null = true;
	ZEND_PARSE_PARAMETERS_START(1, 4)
		Z_PARAM_STR(key)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(delta)
		Z_PARAM_LONG_OR_NULL(initial, initial_is_null)
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t d, init = 0;
	uint32_t ttl;
	if (!php_mcds_arg_u64(delta, 2, &d)
		|| (!initial_is_null && !php_mcds_arg_u64(initial, 3, &init))
		|| !php_mcds_arg_ttl(seconds, 4, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_store, s);
	uint64_t value = 0;
	if (!initial_is_null) {
		MCDS_TRY(mcds_store_incr_or_init(s, BYTES(key), d, init, ttl, &value));
		MCDS_RETURN_U64_OR_STRING(value);
	}
	bool found = false;
	MCDS_TRY(mcds_store_incr(s, BYTES(key), d, &value, &found));
	if (!found) {
		RETURN_NULL();
	}
	MCDS_RETURN_U64_OR_STRING(value);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, kv)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_FACTORY(php_mcds_kv_ce, php_mcds_kv_construct(return_value, ZEND_THIS));
}
