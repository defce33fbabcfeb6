/* Mcds\Set: a set of byte strings in insertion order (mcds_set_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void set_free(void *h) { mcds_set_free(h); }

static bool php_mcds_set_construct(zval *obj, zval *store_zv, zend_string *name)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_set *s = NULL;
	if (store == NULL || !php_mcds_ok(mcds_set_new(store, ZSTR_VAL(name), &s))) {
		return false;
	}
	return php_mcds_adopt(obj, s, set_free, store_zv);
}

ZEND_METHOD(Mcds_Set, __construct)
{
	zval *store;
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_set_construct(ZEND_THIS, store, name);
}

ZEND_METHOD(Mcds_Set, add)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_set, s);
	MCDS_TRY(mcds_set_add(s, (const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member)));
}

ZEND_METHOD(Mcds_Set, remove)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_set, s);
	MCDS_TRY(mcds_set_remove(s, (const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member)));
}

ZEND_METHOD(Mcds_Set, contains)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_set, s);
	bool found = false;
	MCDS_TRY(mcds_set_contains(s, (const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member), &found));
	RETURN_BOOL(found);
}

ZEND_METHOD(Mcds_Set, members)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_set, s);
	mcds_bytes_list *list = NULL;
	MCDS_TRY(mcds_set_members(s, &list));
	if (!php_mcds_bytes_list_to_array(list, return_value)) {
		RETURN_THROWS();
	}
}

/* add_many/remove_many over the strings of the array argument. */
static void set_many(INTERNAL_FUNCTION_PARAMETERS,
	mcds_result (*many)(const mcds_set *, const uint8_t *const *, const uintptr_t *, uintptr_t))
{
	HashTable *members;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(members)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_set, s);
	php_mcds_members m;
	if (!php_mcds_members_from_array(members, 1, &m)) {
		RETURN_THROWS();
	}
	mcds_result r = many(s, m.data, m.lens, m.count);
	php_mcds_members_free(&m);
	MCDS_TRY(r);
}

ZEND_METHOD(Mcds_Set, addMany)
{
	set_many(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_set_add_many);
}

ZEND_METHOD(Mcds_Set, removeMany)
{
	set_many(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_set_remove_many);
}

ZEND_METHOD(Mcds_Set, compact)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_set, s);
	bool rewritten = false;
	MCDS_TRY(mcds_set_compact(s, &rewritten));
	RETURN_BOOL(rewritten);
}

ZEND_METHOD(Mcds_Set, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_set, s);
	MCDS_TRY(mcds_set_clear(s));
}

ZEND_METHOD(Mcds_Set, withTtl)
{
	zend_long seconds;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl;
	if (!php_mcds_arg_ttl(seconds, 1, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_set, s);
	mcds_set *derived = NULL;
	MCDS_TRY(mcds_set_with_ttl(s, ttl, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, set_free);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, set)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_set_ce, php_mcds_set_construct(return_value, ZEND_THIS, name));
}
