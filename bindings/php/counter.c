/* Mcds\Counter: an exact shared counter (mcds_counter_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"
#include "zend_exceptions.h"

static void counter_free(void *h) { mcds_counter_free(h); }

static bool php_mcds_counter_construct(zval *obj, zval *store_zv, zend_string *name)
{
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_counter *c = NULL;
	if (store == NULL || !php_mcds_ok(mcds_counter_new(store, ZSTR_VAL(name), &c))) {
		return false;
	}
	return php_mcds_adopt(obj, c, counter_free, store_zv);
}

ZEND_METHOD(Mcds_Counter, __construct)
{
	zval *store;
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_counter_construct(ZEND_THIS, store, name);
}

/* Counter::withKey: the counter on exactly $key (bytes, checked by
 * libmcds: a NUL byte is its InvalidKeyException, not a TypeError). */
ZEND_METHOD(Mcds_Counter, withKey)
{
	zval *store_zv;
	zend_string *key;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(store_zv, php_mcds_store_ce)
		Z_PARAM_STR(key)
	ZEND_PARSE_PARAMETERS_END();
	const mcds_store *store = php_mcds_store_handle(store_zv);
	if (store == NULL) {
		RETURN_THROWS();
	}
	mcds_counter *c = NULL;
	MCDS_TRY(mcds_counter_new_with_key(store, (const uint8_t *)ZSTR_VAL(key), ZSTR_LEN(key), &c));
	object_init_ex(return_value, php_mcds_counter_ce);
	/* A fresh object: adopting cannot fail. */
	php_mcds_adopt(return_value, c, counter_free, store_zv);
}

static void counter_step(INTERNAL_FUNCTION_PARAMETERS,
	mcds_result (*step)(const mcds_counter *, uint64_t, uint64_t *))
{
	zend_long delta = 1;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(delta)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t d, value = 0;
	if (!php_mcds_arg_u64(delta, 1, &d)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_counter, c);
	MCDS_TRY(step(c, d, &value));
	MCDS_RETURN_U64_OR_STRING(value);
}

ZEND_METHOD(Mcds_Counter, incr)
{
	counter_step(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_counter_incr);
}

ZEND_METHOD(Mcds_Counter, decr)
{
	counter_step(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_counter_decr);
}

ZEND_METHOD(Mcds_Counter, get)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter, c);
	uint64_t value = 0;
	MCDS_TRY(mcds_counter_get(c, &value));
	MCDS_RETURN_U64_OR_STRING(value);
}

ZEND_METHOD(Mcds_Counter, reset)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_counter, c);
	MCDS_TRY(mcds_counter_reset(c));
}

/* What incrMany's TypeError says was given: "[type, type]" for an array
 * with exactly the keys 0 and 1, else the value's type. */
static const char *incr_pair_given(zval *pair, char *buf, size_t size)
{
	if (Z_TYPE_P(pair) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(pair)) == 2) {
		zval *c = zend_hash_index_find_deref(Z_ARRVAL_P(pair), 0);
		zval *d = zend_hash_index_find_deref(Z_ARRVAL_P(pair), 1);
		if (c != NULL && d != NULL) {
			snprintf(buf, size, "[%s, %s]", zend_zval_type_name(c), zend_zval_type_name(d));
			return buf;
		}
	}
	return zend_zval_type_name(pair);
}

/* Element `i` of incrMany's $increments, a [Counter, int] pair: its handle
 * and delta, or false with a TypeError, ValueError or Error thrown. The
 * delta is converted as an int parameter would be (the caller's
 * strict_types). */
static bool incr_pair(zval *pair, uintptr_t i, const mcds_counter **counter, uint64_t *delta)
{
	ZVAL_DEREF(pair);
	zval *c = NULL, *d = NULL;
	if (Z_TYPE_P(pair) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(pair)) == 2) {
		c = zend_hash_index_find_deref(Z_ARRVAL_P(pair), 0);
		d = zend_hash_index_find_deref(Z_ARRVAL_P(pair), 1);
	}
	zend_long v = 0;
	if (c == NULL || d == NULL || Z_TYPE_P(c) != IS_OBJECT || !instanceof_function(Z_OBJCE_P(c), php_mcds_counter_ce)
		|| !zend_parse_arg_long(d, &v, NULL, false, 1)) {
		if (!EG(exception)) {
			char buf[2 * 256 + 8];
			zend_argument_type_error(1, "must contain only [Mcds\\Counter, int] pairs, %s given at increments[%zu]",
				incr_pair_given(pair, buf, sizeof(buf)), (size_t)i);
		}
		return false;
	}
	if (v < 0) {
		zend_argument_value_error(1, "must contain deltas greater than or equal to 0, " ZEND_LONG_FMT
			" given at increments[%zu]", v, (size_t)i);
		return false;
	}
	*delta = (uint64_t)v;
	*counter = php_mcds_this_handle(c);
	return *counter != NULL;
}

ZEND_METHOD(Mcds_Counter, incrMany)
{
	HashTable *increments;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(increments)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t n = zend_hash_num_elements(increments);
	/* Never NULL, even for none. */
	const mcds_counter **counters = safe_emalloc(n ? n : 1, sizeof(*counters), 0);
	uint64_t *deltas = safe_emalloc(n ? n : 1, sizeof(*deltas), 0);
	uint64_t *values = safe_emalloc(n ? n : 1, sizeof(*values), 0);
	mcds_result *results = safe_emalloc(n ? n : 1, sizeof(*results), 0);
	uintptr_t count = 0;
	bool ok = true;
	zval *pair;
	/* The handles stay live through the call: the array holds the counters. */
	ZEND_HASH_FOREACH_VAL(increments, pair) {
		if (!incr_pair(pair, count, &counters[count], &deltas[count])) {
			ok = false;
			break;
		}
		results[count] = MCDS_OK;
		values[count] = 0;
		count++;
	} ZEND_HASH_FOREACH_END();
	if (ok) {
		mcds_result r = mcds_counter_incr_many(counters, deltas, count, values, results);
		if (r != MCDS_OK) {
			/* Refused before sending (no slot written: all still MCDS_OK), or
			 * sent, and `r` is the code of the first failing increment. */
			uintptr_t first = 0;
			while (first < count && results[first] == MCDS_OK) {
				first++;
			}
			if (first < count) {
				const char *message = mcds_last_error_message();
				zend_throw_exception_ex(php_mcds_exception_class(r), (zend_long)r, "increments[%zu]: %s",
					(size_t)first, message != NULL ? message : "");
			} else {
				php_mcds_throw(r);
			}
			ok = false;
		}
	}
	if (ok) {
		array_init_size(return_value, n);
		for (uintptr_t i = 0; i < count; i++) {
			zval v;
			php_mcds_u64_int_or_string(values[i], &v);
			add_next_index_zval(return_value, &v);
		}
	}
	efree(counters);
	efree(deltas);
	efree(values);
	efree(results);
	if (!ok) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_Counter, withTtl)
{
	zend_long seconds;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(seconds)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl;
	if (!php_mcds_arg_ttl(seconds, 1, &ttl)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_counter, c);
	mcds_counter *derived = NULL;
	MCDS_TRY(mcds_counter_with_ttl(c, ttl, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, counter_free);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, counter)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_counter_ce, php_mcds_counter_construct(return_value, ZEND_THIS, name));
}
