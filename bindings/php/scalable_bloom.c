/* Mcds\ScalableBloomFilter (mcds_scalable_bloom_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void scalable_bloom_free(void *h) { mcds_scalable_bloom_free(h); }

static bool php_mcds_scalable_bloom_construct(zval *obj, zval *store_zv, zend_string *name,
	zend_long initial_capacity, double error_rate, uint32_t arg)
{
	uint64_t n;
	if (!php_mcds_arg_u64(initial_capacity, arg, &n)) {
		return false;
	}
	/* The rate is libmcds's to judge (MCDS_INVALID_ARGUMENT), NaN included. */
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_scalable_bloom *sb = NULL;
	if (store == NULL
		|| !php_mcds_ok(mcds_scalable_bloom_new(store, ZSTR_VAL(name), n, error_rate, &sb))) {
		return false;
	}
	return php_mcds_adopt(obj, sb, scalable_bloom_free, store_zv);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, __construct)
{
	zval *store;
	zend_string *name;
	zend_long initial_capacity;
	double error_rate;
	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(initial_capacity)
		Z_PARAM_DOUBLE(error_rate)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_scalable_bloom_construct(ZEND_THIS, store, name, initial_capacity, error_rate, 3);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, withGrowth)
{
	zend_long growth;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(growth)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t g;
	/* 1 to 16 is libmcds's to check (MCDS_INVALID_ARGUMENT). */
	if (!php_mcds_arg_u32(growth, 1, &g)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_scalable_bloom, sb);
	mcds_scalable_bloom *derived = NULL;
	MCDS_TRY(mcds_scalable_bloom_with_growth(sb, g, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, scalable_bloom_free);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, headerKey)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_scalable_bloom, sb);
	const uint8_t *data = NULL;
	uintptr_t len = 0;
	MCDS_TRY(mcds_scalable_bloom_header_key(sb, &data, &len));
	RETURN_STRINGL((const char *)data, len);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, add)
{
	zend_string *element;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(element)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_scalable_bloom, sb);
	bool is_new = false;
	MCDS_TRY(mcds_scalable_bloom_add(sb, (const uint8_t *)ZSTR_VAL(element), ZSTR_LEN(element), &is_new));
	RETURN_BOOL(is_new);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, contains)
{
	zend_string *element;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(element)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_scalable_bloom, sb);
	bool maybe = false;
	MCDS_TRY(mcds_scalable_bloom_contains(sb, (const uint8_t *)ZSTR_VAL(element), ZSTR_LEN(element),
		&maybe));
	RETURN_BOOL(maybe);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, containsMany)
{
	HashTable *elements;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(elements)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_scalable_bloom, sb);
	php_mcds_members m;
	if (!php_mcds_members_from_array(elements, 1, &m)) {
		RETURN_THROWS();
	}
	uintptr_t count = m.count;
	/* Never NULL, even for none. */
	bool *found = safe_emalloc(count ? count : 1, sizeof(*found), 0);
	mcds_result r = mcds_scalable_bloom_contains_many(sb, m.data, m.lens, count, found);
	php_mcds_members_free(&m);
	if (!php_mcds_ok(r)) {
		efree(found);
		RETURN_THROWS();
	}
	array_init_size(return_value, (uint32_t)count);
	for (uintptr_t i = 0; i < count; i++) {
		add_next_index_bool(return_value, found[i]);
	}
	efree(found);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, layers)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_scalable_bloom, sb);
	uintptr_t layers = 0;
	MCDS_TRY(mcds_scalable_bloom_layers(sb, &layers));
	MCDS_RETURN_U64((uint64_t)layers);
}

ZEND_METHOD(Mcds_ScalableBloomFilter, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_scalable_bloom, sb);
	MCDS_TRY(mcds_scalable_bloom_clear(sb));
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, scalableBloomFilter)
{
	zend_string *name;
	zend_long initial_capacity;
	double error_rate;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(initial_capacity)
		Z_PARAM_DOUBLE(error_rate)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_scalable_bloom_ce,
		php_mcds_scalable_bloom_construct(return_value, ZEND_THIS, name, initial_capacity, error_rate, 2));
}
