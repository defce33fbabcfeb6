/* Mcds\Table: members with values (mcds_table_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"
#include "zend_exceptions.h"

static void table_free(void *h) { mcds_table_free(h); }

static bool php_mcds_table_construct(zval *obj, zval *store_zv, zend_string *name)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_table *t = NULL;
	if (store == NULL || !php_mcds_ok(mcds_table_new(store, ZSTR_VAL(name), &t))) {
		return false;
	}
	return php_mcds_adopt(obj, t, table_free, store_zv);
}

ZEND_METHOD(Mcds_Table, __construct)
{
	zval *store;
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_table_construct(ZEND_THIS, store, name);
}

#define MEMBER(s) (const uint8_t *)ZSTR_VAL(s), ZSTR_LEN(s)

ZEND_METHOD(Mcds_Table, set)
{
	zend_string *member, *value;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(member)
		Z_PARAM_STR(value)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_table, t);
	MCDS_TRY(mcds_table_set(t, MEMBER(member), MEMBER(value)));
}

ZEND_METHOD(Mcds_Table, has)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_table, t);
	bool present = false;
	MCDS_TRY(mcds_table_has(t, MEMBER(member), &present));
	RETURN_BOOL(present);
}

ZEND_METHOD(Mcds_Table, get)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_table, t);
	mcds_bytes_list *value = NULL;
	MCDS_TRY(mcds_table_get(t, MEMBER(member), &value));
	if (!php_mcds_optional_bytes(value, "mcds_table_get", return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_Table, delete)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_table, t);
	bool existed = false;
	MCDS_TRY(mcds_table_delete(t, MEMBER(member), &existed));
	RETURN_BOOL(existed);
}

ZEND_METHOD(Mcds_Table, keys)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_table, t);
	mcds_bytes_list *list = NULL;
	MCDS_TRY(mcds_table_keys(t, &list));
	if (!php_mcds_bytes_list_to_array(list, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_Table, entries)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_table, t);
	mcds_bytes_list *members = NULL, *values = NULL;
	MCDS_TRY(mcds_table_entries(t, &members, &values));
	zval m, v;
	/* Each converter frees its list, whatever happens. */
	bool ok = php_mcds_bytes_list_to_array(members, &m);
	if (!ok) {
		mcds_bytes_list_free(values);
		RETURN_THROWS();
	}
	if (!php_mcds_bytes_list_to_array(values, &v)) {
		zval_ptr_dtor(&m);
		RETURN_THROWS();
	}
	uint32_t n = zend_hash_num_elements(Z_ARRVAL(m));
	if (n != zend_hash_num_elements(Z_ARRVAL(v))) { /* libmcds promises the same length */
		zval_ptr_dtor(&m);
		zval_ptr_dtor(&v);
		zend_throw_exception(php_mcds_exception_class(MCDS_INTERNAL),
			"mcds_table_entries returned lists of different lengths", MCDS_INTERNAL);
		RETURN_THROWS();
	}
	array_init_size(return_value, n);
	for (uint32_t i = 0; i < n; i++) {
		zval *member = zend_hash_index_find(Z_ARRVAL(m), i);
		zval *value = zend_hash_index_find(Z_ARRVAL(v), i);
		Z_TRY_ADDREF_P(value);
		/* A numeric member ("42") becomes an int key, as in any PHP array. */
		zend_symtable_update(Z_ARRVAL_P(return_value), Z_STR_P(member), value);
	}
	zval_ptr_dtor(&m);
	zval_ptr_dtor(&v);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, table)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_table_ce, php_mcds_table_construct(return_value, ZEND_THIS, name));
}
