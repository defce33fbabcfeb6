/* Mcds\Leaderboard (mcds_leaderboard_*; entries from mcds_entry_list_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void leaderboard_free(void *h) { mcds_leaderboard_free(h); }

static bool php_mcds_leaderboard_construct(zval *obj, zval *store_zv, zend_string *name, zend_long capacity,
	uint32_t arg)
{
	uint32_t cap;
	if (!php_mcds_arg_u32(capacity, arg, &cap)) {
		return false;
	}
	/* 0 and a capacity past the item limit are libmcds's to refuse. */
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_leaderboard *lb = NULL;
	if (store == NULL || !php_mcds_ok(mcds_leaderboard_new(store, ZSTR_VAL(name), cap, &lb))) {
		return false;
	}
	return php_mcds_adopt(obj, lb, leaderboard_free, store_zv);
}

/* An entry as ['member' => string, 'count' => int|string, 'error' =>
 * int|string] (a count past PHP_INT_MAX as its numeric string). */
static bool entry_result(const uint8_t *member, size_t len, uint64_t count, uint64_t error, zval *rv)
{
	zval c, e;
	php_mcds_u64_int_or_string(count, &c);
	php_mcds_u64_int_or_string(error, &e);
	array_init_size(rv, 3);
	add_assoc_stringl(rv, "member", (const char *)member, len);
	add_assoc_zval(rv, "count", &c);
	add_assoc_zval(rv, "error", &e);
	return true;
}

ZEND_METHOD(Mcds_Leaderboard, __construct)
{
	zval *store;
	zend_string *name;
	zend_long capacity;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(capacity)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_leaderboard_construct(ZEND_THIS, store, name, capacity, 3);
}

ZEND_METHOD(Mcds_Leaderboard, key)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_leaderboard, lb);
	const uint8_t *data = NULL;
	uintptr_t len = 0;
	MCDS_TRY(mcds_leaderboard_key(lb, &data, &len));
	RETURN_STRINGL((const char *)data, len);
}

ZEND_METHOD(Mcds_Leaderboard, capacity)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_leaderboard, lb);
	uint32_t capacity = 0;
	MCDS_TRY(mcds_leaderboard_capacity(lb, &capacity));
	RETURN_LONG((zend_long)capacity);
}

ZEND_METHOD(Mcds_Leaderboard, incr)
{
	zend_string *member;
	zend_long by = 1;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(member)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(by)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t n;
	if (!php_mcds_arg_u64(by, 2, &n)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_leaderboard, lb);
	uint64_t count = 0;
	MCDS_TRY(mcds_leaderboard_incr(lb, (const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member), n, &count));
	/* Counted already: a count past PHP_INT_MAX is returned as a string,
	 * never thrown (a caller retrying would count twice). */
	php_mcds_u64_int_or_string(count, return_value);
}

ZEND_METHOD(Mcds_Leaderboard, incrMany)
{
	HashTable *increments;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(increments)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_leaderboard, lb);
	/* member => by: the keys are the members (PHP makes an int of a
	 * decimal key; its decimal string is the member given). */
	uint32_t count = zend_hash_num_elements(increments);
	zval keys, *by;
	zend_string *key;
	zend_ulong index;
	array_init_size(&keys, count);
	uint64_t *bys = safe_emalloc(count ? count : 1, sizeof(*bys), 0);
	uint32_t i = 0;
	ZEND_HASH_FOREACH_KEY_VAL(increments, index, key, by) {
		zend_long v;
		ZVAL_DEREF(by);
		if (Z_TYPE_P(by) != IS_LONG) {
			zend_argument_type_error(1, "must be an array of member => int, %s given for a by",
				zend_zval_type_name(by));
			goto fail;
		}
		v = Z_LVAL_P(by);
		if (!php_mcds_arg_u64(v, 1, &bys[i])) {
			goto fail;
		}
		if (key != NULL) {
			add_next_index_str(&keys, zend_string_copy(key));
		} else {
			add_next_index_str(&keys, zend_long_to_str((zend_long)index));
		}
		i++;
	} ZEND_HASH_FOREACH_END();
	{
		php_mcds_members m;
		if (!php_mcds_members_from_array(Z_ARRVAL(keys), 1, &m)) {
			goto fail;
		}
		mcds_result r = mcds_leaderboard_incr_many(lb, m.data, m.lens, bys, m.count);
		php_mcds_members_free(&m);
		efree(bys);
		zval_ptr_dtor(&keys);
		MCDS_TRY(r);
		return;
	}
fail:
	efree(bys);
	zval_ptr_dtor(&keys);
	RETURN_THROWS();
}

ZEND_METHOD(Mcds_Leaderboard, summary)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_leaderboard, lb);
	mcds_board_summary s = {0};
	MCDS_TRY(mcds_leaderboard_summary(lb, &s));
	zval total, max_error;
	php_mcds_u64_int_or_string(s.total, &total);
	php_mcds_u64_int_or_string(s.max_error, &max_error);
	array_init_size(return_value, 5);
	add_assoc_long(return_value, "capacity", (zend_long)s.capacity);
	add_assoc_zval(return_value, "total", &total);
	add_assoc_bool(return_value, "exact", s.exact);
	add_assoc_zval(return_value, "maxError", &max_error);
	add_assoc_long(return_value, "members", (zend_long)s.members);
}

ZEND_METHOD(Mcds_Leaderboard, top)
{
	zend_long k;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(k)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t n;
	if (!php_mcds_arg_u64(k, 1, &n)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_leaderboard, lb);
	mcds_entry_list *list = NULL;
	MCDS_TRY(mcds_leaderboard_top(lb, (uintptr_t)n, &list));
	uintptr_t len = 0;
	if (!php_mcds_ok(mcds_entry_list_len(list, &len))) {
		mcds_entry_list_free(list);
		RETURN_THROWS();
	}
	array_init_size(return_value, (uint32_t)len);
	for (uintptr_t i = 0; i < len; i++) {
		const uint8_t *data = NULL;
		uintptr_t dlen = 0;
		uint64_t count = 0, error = 0;
		zval entry;
		if (!php_mcds_ok(mcds_entry_list_get(list, i, &data, &dlen, &count, &error))
			|| !entry_result(data, dlen, count, error, &entry)) {
			mcds_entry_list_free(list);
			RETURN_THROWS();
		}
		add_next_index_zval(return_value, &entry);
	}
	mcds_entry_list_free(list);
}

ZEND_METHOD(Mcds_Leaderboard, score)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_leaderboard, lb);
	bool found = false;
	uint64_t count = 0, error = 0;
	MCDS_TRY(mcds_leaderboard_score(lb, (const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member), &found,
		&count, &error));
	if (!found) {
		RETURN_NULL();
	}
	if (!entry_result((const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member), count, error, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_Leaderboard, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_leaderboard, lb);
	MCDS_TRY(mcds_leaderboard_clear(lb));
}

ZEND_METHOD(Mcds_Leaderboard, withTtl)
{
	zend_long seconds;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl;
	if (!php_mcds_arg_ttl(seconds, 1, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_leaderboard, lb);
	mcds_leaderboard *derived = NULL;
	MCDS_TRY(mcds_leaderboard_with_ttl(lb, ttl, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, leaderboard_free);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, leaderboard)
{
	zend_string *name;
	zend_long capacity;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(capacity)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_leaderboard_ce,
		php_mcds_leaderboard_construct(return_value, ZEND_THIS, name, capacity, 2));
}
