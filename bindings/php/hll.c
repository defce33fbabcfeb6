/* Mcds\HyperLogLog: distinct counting (mcds_hll_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

static void hll_free(void *h) { mcds_hll_free(h); }

static bool php_mcds_hll_construct(zval *obj, zval *store_zv, zend_string *name)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_hll *h = NULL;
	if (store == NULL || !php_mcds_ok(mcds_hll_new(store, ZSTR_VAL(name), &h))) {
		return false;
	}
	return php_mcds_adopt(obj, h, hll_free, store_zv);
}

ZEND_METHOD(Mcds_HyperLogLog, __construct)
{
	zval *store;
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_hll_construct(ZEND_THIS, store, name);
}

ZEND_METHOD(Mcds_HyperLogLog, add)
{
	zend_string *element;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(element)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_hll, h);
	bool changed = false;
	MCDS_TRY(mcds_hll_add(h, (const uint8_t *)ZSTR_VAL(element), ZSTR_LEN(element), &changed));
	RETURN_BOOL(changed);
}

ZEND_METHOD(Mcds_HyperLogLog, count)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_hll, h);
	uint64_t n = 0;
	MCDS_TRY(mcds_hll_count(h, &n));
	MCDS_RETURN_U64(n);
}

/* The handles of the variadic HyperLogLog arguments, after `first`
 * (this sketch, or NULL): an array never NULL, even for none, to efree. */
static const mcds_hll **hll_handles(const mcds_hll *first, zval *args, uint32_t argc, uintptr_t *count)
{
	uintptr_t n = (first != NULL) + (uintptr_t)argc;
	const mcds_hll **handles = safe_emalloc(n ? n : 1, sizeof(*handles), 0);
	uintptr_t k = 0;
	if (first != NULL) {
		handles[k++] = first;
	}
	for (uint32_t i = 0; i < argc; i++) {
		handles[k] = php_mcds_this_handle(&args[i]);
		if (handles[k++] == NULL) {
			efree(handles);
			return NULL;
		}
	}
	*count = n;
	return handles;
}

ZEND_METHOD(Mcds_HyperLogLog, merge)
{
	zval *args = NULL;
	uint32_t argc = 0;
	ZEND_PARSE_PARAMETERS_START(0, -1)
		Z_PARAM_VARIADIC('*', args, argc)
	ZEND_PARSE_PARAMETERS_END();
	/* Internal functions check their own argument types: zpp has no
	 * variadic-of-class specifier. */
	if (!php_mcds_check_variadic(args, argc, php_mcds_hll_ce, 1)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_hll, target);
	uintptr_t count = 0;
	const mcds_hll **sources = hll_handles(NULL, args, argc, &count);
	if (sources == NULL) {
		RETURN_THROWS();
	}
	mcds_result r = mcds_hll_merge(target, sources, count);
	efree(sources);
	MCDS_TRY(r);
}

ZEND_METHOD(Mcds_HyperLogLog, countUnion)
{
	zval *args = NULL;
	uint32_t argc = 0;
	ZEND_PARSE_PARAMETERS_START(0, -1)
		Z_PARAM_VARIADIC('*', args, argc)
	ZEND_PARSE_PARAMETERS_END();
	if (!php_mcds_check_variadic(args, argc, php_mcds_hll_ce, 1)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_hll, self);
	uintptr_t count = 0;
	const mcds_hll **sketches = hll_handles(self, args, argc, &count);
	if (sketches == NULL) {
		RETURN_THROWS();
	}
	uint64_t n = 0;
	mcds_result r = mcds_hll_count_union(sketches, count, &n);
	efree(sketches);
	MCDS_TRY(r);
	MCDS_RETURN_U64(n);
}

ZEND_METHOD(Mcds_HyperLogLog, addMany)
{
	HashTable *elements;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(elements)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_hll, h);
	php_mcds_members m;
	if (!php_mcds_members_from_array(elements, 1, &m)) {
		RETURN_THROWS();
	}
	bool changed = false;
	mcds_result r = mcds_hll_add_many(h, m.data, m.lens, m.count, &changed);
	php_mcds_members_free(&m);
	MCDS_TRY(r);
	RETURN_BOOL(changed);
}

ZEND_METHOD(Mcds_HyperLogLog, clear)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_hll, h);
	MCDS_TRY(mcds_hll_clear(h));
}

ZEND_METHOD(Mcds_HyperLogLog, withTtl)
{
	zend_long seconds;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl;
	if (!php_mcds_arg_ttl(seconds, 1, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_hll, h);
	mcds_hll *derived = NULL;
	MCDS_TRY(mcds_hll_with_ttl(h, ttl, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, hll_free);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, hyperLogLog)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_hll_ce, php_mcds_hll_construct(return_value, ZEND_THIS, name));
}
