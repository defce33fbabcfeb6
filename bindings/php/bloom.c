/* Mcds\BloomFilter (mcds_bloom_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void bloom_free(void *h) { mcds_bloom_free(h); }

static bool php_mcds_bloom_construct(zval *obj, zval *store_zv, zend_string *name, zend_long expected,
	double fp_rate, uint32_t arg)
{
	uint64_t n;
	if (!php_mcds_arg_u64(expected, arg, &n)) {
		return false;
	}
	/* The rate is libmcds's to judge (MCDS_INVALID_ARGUMENT), NaN included. */
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_bloom *b = NULL;
	if (store == NULL || !php_mcds_ok(mcds_bloom_new(store, ZSTR_VAL(name), n, fp_rate, &b))) {
		return false;
	}
	return php_mcds_adopt(obj, b, bloom_free, store_zv);
}

ZEND_METHOD(Mcds_BloomFilter, __construct)
{
	zval *store;
	zend_string *name;
	zend_long expected;
	double fp_rate;
	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(expected)
		Z_PARAM_DOUBLE(fp_rate)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_bloom_construct(ZEND_THIS, store, name, expected, fp_rate, 3);
}

ZEND_METHOD(Mcds_BloomFilter, add)
{
	zend_string *element;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(element)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_bloom, b);
	bool is_new = false;
	MCDS_TRY(mcds_bloom_add(b, (const uint8_t *)ZSTR_VAL(element), ZSTR_LEN(element), &is_new));
	RETURN_BOOL(is_new);
}

ZEND_METHOD(Mcds_BloomFilter, contains)
{
	zend_string *element;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(element)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_bloom, b);
	bool maybe = false;
	MCDS_TRY(mcds_bloom_contains(b, (const uint8_t *)ZSTR_VAL(element), ZSTR_LEN(element), &maybe));
	RETURN_BOOL(maybe);
}

ZEND_METHOD(Mcds_BloomFilter, addMany)
{
	HashTable *elements;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(elements)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_bloom, b);
	php_mcds_members m;
	if (!php_mcds_members_from_array(elements, 1, &m)) {
		RETURN_THROWS();
	}
	uintptr_t added = 0;
	mcds_result r = mcds_bloom_add_many(b, m.data, m.lens, m.count, &added);
	php_mcds_members_free(&m);
	MCDS_TRY(r);
	MCDS_RETURN_U64((uint64_t)added);
}

ZEND_METHOD(Mcds_BloomFilter, containsMany)
{
	HashTable *elements;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(elements)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_bloom, b);
	php_mcds_members m;
	if (!php_mcds_members_from_array(elements, 1, &m)) {
		RETURN_THROWS();
	}
	uintptr_t count = m.count;
	/* Never NULL, even for none. */
	bool *found = safe_emalloc(count ? count : 1, sizeof(*found), 0);
	mcds_result r = mcds_bloom_contains_many(b, m.data, m.lens, count, found);
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

ZEND_METHOD(Mcds_BloomFilter, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_bloom, b);
	MCDS_TRY(mcds_bloom_clear(b));
}

ZEND_METHOD(Mcds_BloomFilter, withTtl)
{
	zend_long seconds;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl;
	if (!php_mcds_arg_ttl(seconds, 1, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_bloom, b);
	mcds_bloom *derived = NULL;
	MCDS_TRY(mcds_bloom_with_ttl(b, ttl, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, bloom_free);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, bloomFilter)
{
	zend_string *name;
	zend_long expected;
	double fp_rate;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(expected)
		Z_PARAM_DOUBLE(fp_rate)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_bloom_ce,
		php_mcds_bloom_construct(return_value, ZEND_THIS, name, expected, fp_rate, 2));
}
