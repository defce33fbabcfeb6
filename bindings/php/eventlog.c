/* Mcds\EventLog: a ring of time-chunk keys (mcds_log_*, mcds_event_list_*),
 * and Mcds\Cursor, its polling position (mcds_cursor). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void log_free(void *h) { mcds_log_free(h); }

static bool php_mcds_log_construct(zval *obj, zval *store_zv, zend_string *name, zend_long chunk_secs,
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

ZEND_METHOD(Mcds_EventLog, putAt)
{
	zend_long at;
	zend_string *payload;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(at)
		Z_PARAM_STR(payload)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t at_ms;
	if (!php_mcds_arg_u64(at, 1, &at_ms)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_log, l);
	MCDS_TRY(mcds_log_put_at(l, at_ms, (const uint8_t *)ZSTR_VAL(payload), ZSTR_LEN(payload)));
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

/* ---- Mcds\Cursor ---------------------------------------------------------- */

/* Initialize the readonly properties of a Mcds\Cursor (from its own scope,
 * as readonly properties must be). */
static void cursor_init(zend_object *obj, zend_long at_ms, zend_long seen)
{
	zend_update_property_long(php_mcds_cursor_ce, obj, "atMs", sizeof("atMs") - 1, at_ms);
	if (EG(exception) != NULL) {
		return;
	}
	zend_update_property_long(php_mcds_cursor_ce, obj, "seenAtMs", sizeof("seenAtMs") - 1, seen);
}

/* A new Mcds\Cursor from an mcds_cursor, in rv. */
static bool cursor_result(const mcds_cursor *c, zval *rv)
{
	zval at, seen;
	if (!php_mcds_u64_result(c->at_ms, &at) || !php_mcds_u64_result(c->seen_at_ms, &seen)) {
		return false;
	}
	object_init_ex(rv, php_mcds_cursor_ce);
	cursor_init(Z_OBJ_P(rv), Z_LVAL(at), Z_LVAL(seen));
	return true;
}

/* An mcds_cursor from a Mcds\Cursor (its properties may be missing or
 * negative in one made by unserialize(): a ValueError for `arg`). */
static bool cursor_arg(zval *cursor, uint32_t arg, mcds_cursor *out)
{
	zval rv1, rv2;
	zval *at = zend_read_property(php_mcds_cursor_ce, Z_OBJ_P(cursor), "atMs", sizeof("atMs") - 1, 1, &rv1);
	zval *seen = zend_read_property(php_mcds_cursor_ce, Z_OBJ_P(cursor), "seenAtMs", sizeof("seenAtMs") - 1, 1, &rv2);
	if (Z_TYPE_P(at) != IS_LONG || Z_TYPE_P(seen) != IS_LONG || Z_LVAL_P(at) < 0 || Z_LVAL_P(seen) < 0) {
		zend_argument_value_error(arg, "must be a Mcds\\Cursor with $atMs and $seenAtMs set, both >= 0");
		return false;
	}
	out->at_ms = (uint64_t)Z_LVAL_P(at);
	out->seen_at_ms = (uint64_t)Z_LVAL_P(seen);
	return true;
}

ZEND_METHOD(Mcds_EventLog, since)
{
	zval *cursor_zv = NULL;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_OBJECT_OF_CLASS_OR_NULL(cursor_zv, php_mcds_cursor_ce)
	ZEND_PARSE_PARAMETERS_END();
	mcds_cursor cursor = {0, 0}, next = {0, 0};
	if (cursor_zv != NULL && !cursor_arg(cursor_zv, 1, &cursor)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_log, l);
	mcds_event_list *list = NULL;
	MCDS_TRY(mcds_log_since(l, &cursor, &list, &next));
	zval events, next_zv;
	if (!event_list_to_array(list, &events)) {
		RETURN_THROWS();
	}
	if (!cursor_result(&next, &next_zv)) {
		zval_ptr_dtor(&events);
		RETURN_THROWS();
	}
	array_init_size(return_value, 2);
	add_next_index_zval(return_value, &events);
	add_next_index_zval(return_value, &next_zv);
}

ZEND_METHOD(Mcds_Cursor, __construct)
{
	zend_long at = 0, seen = 0;
	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(at)
		Z_PARAM_LONG(seen)
	ZEND_PARSE_PARAMETERS_END();
	if (at < 0) {
		zend_argument_value_error(1, "must be greater than or equal to 0");
		RETURN_THROWS();
	}
	if (seen < 0) {
		zend_argument_value_error(2, "must be greater than or equal to 0");
		RETURN_THROWS();
	}
	/* A second __construct() call fails here: the properties are readonly. */
	cursor_init(Z_OBJ_P(ZEND_THIS), at, seen);
}

ZEND_METHOD(Mcds_Cursor, after)
{
	zend_long at;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(at)
	ZEND_PARSE_PARAMETERS_END();
	if (at < 0 || at == ZEND_LONG_MAX) {
		zend_argument_value_error(1, "must be between 0 and %" PRId64, (int64_t)ZEND_LONG_MAX - 1);
		RETURN_THROWS();
	}
	object_init_ex(return_value, php_mcds_cursor_ce);
	cursor_init(Z_OBJ_P(return_value), at + 1, 0);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, eventLog)
{
	zend_string *name;
	zend_long chunk_secs, chunks;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(chunk_secs)
		Z_PARAM_LONG(chunks)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_log_ce,
		php_mcds_log_construct(return_value, ZEND_THIS, name, chunk_secs, chunks, 2));
}
