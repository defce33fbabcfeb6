/* Mcds\ShardedSet: a set spread over several items (mcds_sharded_set_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void sharded_free(void *h) { mcds_sharded_set_free(h); }

static bool php_mcds_sharded_set_construct(zval *obj, zval *store_zv, zend_string *name, zend_long shards,
	uint32_t arg)
{
	uint32_t n;
	if (!php_mcds_arg_u32(shards, arg, &n)) {
		return false;
	}
	/* The range (1 to 4096) is libmcds's to judge: MCDS_INVALID_ARGUMENT. */
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_sharded_set *s = NULL;
	if (store == NULL || !php_mcds_ok(mcds_sharded_set_new(store, ZSTR_VAL(name), n, &s))) {
		return false;
	}
	return php_mcds_adopt(obj, s, sharded_free, store_zv);
}

ZEND_METHOD(Mcds_ShardedSet, __construct)
{
	zval *store;
	zend_string *name;
	zend_long shards;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(shards)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_sharded_set_construct(ZEND_THIS, store, name, shards, 3);
}

static void sharded_one(INTERNAL_FUNCTION_PARAMETERS,
	mcds_result (*one)(const mcds_sharded_set *, const uint8_t *, uintptr_t))
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_sharded_set, s);
	MCDS_TRY(one(s, (const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member)));
}

ZEND_METHOD(Mcds_ShardedSet, add)
{
	sharded_one(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_sharded_set_add);
}

ZEND_METHOD(Mcds_ShardedSet, remove)
{
	sharded_one(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_sharded_set_remove);
}

static void sharded_many(INTERNAL_FUNCTION_PARAMETERS,
	mcds_result (*many)(const mcds_sharded_set *, const uint8_t *const *, const uintptr_t *, uintptr_t))
{
	HashTable *members;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(members)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_sharded_set, s);
	php_mcds_members m;
	if (!php_mcds_members_from_array(members, 1, &m)) {
		RETURN_THROWS();
	}
	mcds_result r = many(s, m.data, m.lens, m.count);
	php_mcds_members_free(&m);
	MCDS_TRY(r);
}

ZEND_METHOD(Mcds_ShardedSet, addMany)
{
	sharded_many(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_sharded_set_add_many);
}

ZEND_METHOD(Mcds_ShardedSet, removeMany)
{
	sharded_many(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_sharded_set_remove_many);
}

ZEND_METHOD(Mcds_ShardedSet, contains)
{
	zend_string *member;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(member)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_sharded_set, s);
	bool found = false;
	MCDS_TRY(mcds_sharded_set_contains(s, (const uint8_t *)ZSTR_VAL(member), ZSTR_LEN(member), &found));
	RETURN_BOOL(found);
}

ZEND_METHOD(Mcds_ShardedSet, members)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_sharded_set, s);
	mcds_bytes_list *list = NULL;
	MCDS_TRY(mcds_sharded_set_members(s, &list));
	if (!php_mcds_bytes_list_to_array(list, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_ShardedSet, compact)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_sharded_set, s);
	MCDS_TRY(mcds_sharded_set_compact(s));
}

ZEND_METHOD(Mcds_ShardedSet, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_sharded_set, s);
	MCDS_TRY(mcds_sharded_set_clear(s));
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, shardedSet)
{
	zend_string *name;
	zend_long shards;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(shards)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_sharded_set_ce,
		php_mcds_sharded_set_construct(return_value, ZEND_THIS, name, shards, 2));
}
