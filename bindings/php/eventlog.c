/* Mcds\EventLog: a ring of time-chunk keys (mcds_log_*, mcds_event_list_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void log_free(void *h) { mcds_log_free(h); }

bool php_mcds_log_construct(zval *obj, zval *store_zv, zend_string *name, zend_long chunk_secs,
	zend_long chunks, uint32_t arg)
{
	uint32_t s, n;
	if (!php_mcds_arg_u32(chunk_secs, arg, &s) || !php_mcds_arg_u32(chunks, arg + 1, &n)) {
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_log *l = NULL;
	if (store == NULL || !php_mcds_ok(mcds_log_new(store, ZSTR_VAL(name), s, n, &l))) {
		return false;
	}
	return php_mcds_adopt(obj, l, log_free, store_zv);
}

ZEND_METHOD(Mcds_EventLog, __construct)
{
	zval *store;
	zend_string *name;
	zend_long chunk_secs, chunks;
	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(chunk_secs)
		Z_PARAM_LONG(chunks)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_log_construct(ZEND_THIS, store, name, chunk_secs, chunks, 3);
}

ZEND_METHOD(Mcds_EventLog, put)
{
	zend_string *payload;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(payload)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_log, l);
	uint64_t at_ms = 0;
	MCDS_TRY(mcds_log_put(l, (const uint8_t *)ZSTR_VAL(payload), ZSTR_LEN(payload), &at_ms));
	MCDS_RETURN_U64(at_ms);
}

/* A PHP list of ['at_ms' => int, 'payload' => string]; frees the list. */
static bool event_list_to_array(mcds_event_list *list, zval *rv)
{
	uintptr_t len = 0;
	if (!php_mcds_ok(mcds_event_list_len(list, &len))) {
		mcds_event_list_free(list);
		return false;
	}
	array_init_size(rv, (uint32_t)MIN(len, UINT32_MAX));
	for (uintptr_t i = 0; i < len; i++) {
		uint64_t at_ms = 0;
		const uint8_t *data = NULL;
		uintptr_t n = 0;
		zval event, at;
		if (!php_mcds_ok(mcds_event_list_get(list, i, &at_ms, &data, &n))
			|| !php_mcds_u64_result(at_ms, &at)) {
			mcds_event_list_free(list);
			zval_ptr_dtor(rv);
			ZVAL_NULL(rv);
			return false;
		}
		array_init_size(&event, 2);
		add_assoc_zval(&event, "at_ms", &at);
		add_assoc_stringl(&event, "payload", (const char *)data, n);
		add_next_index_zval(rv, &event);
	}
	mcds_event_list_free(list);
	return true;
}

ZEND_METHOD(Mcds_EventLog, fetch)
{
	zend_long first, last;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(first)
		Z_PARAM_LONG(last)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t f, l64;
	if (!php_mcds_arg_u64(first, 1, &f) || !php_mcds_arg_u64(last, 2, &l64)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_log, l);
	mcds_event_list *list = NULL;
	MCDS_TRY(mcds_log_fetch(l, f, l64, &list));
	if (!event_list_to_array(list, return_value)) {
		RETURN_THROWS();
	}
}
