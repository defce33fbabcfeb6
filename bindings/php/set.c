/* Mcds\Set: a set of byte strings in insertion order (mcds_set_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void set_free(void *h) { mcds_set_free(h); }

bool php_mcds_set_construct(zval *obj, zval *store_zv, zend_string *name)
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
