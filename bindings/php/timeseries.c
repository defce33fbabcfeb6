/* Mcds\TimeSeries (mcds_timeseries_*, mcds_bucket_list_*) and
 * Mcds\PackedSeries (mcds_packed_series_*, mcds_slot_list_*). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "php_mcds.h"

/* Room for every resolution a series can have (MAX_RESOLUTIONS of the
 * Rust crate). */
#define MAX_RESOLUTIONS 8

static void timeseries_free(void *h) { mcds_timeseries_free(h); }
static void packed_series_free(void *h) { mcds_packed_series_free(h); }

/* An exact sum as a PHP int when it fits one, else as the numeric string
 * of its decimal digits (the value is hi * 2^64 + lo). */
static void i128_result(mcds_i128 x, zval *rv)
{
	int64_t low = (int64_t)x.lo;
	if (x.hi == (low < 0 ? -1 : 0) && low >= ZEND_LONG_MIN && low <= ZEND_LONG_MAX) {
		ZVAL_LONG(rv, (zend_long)low);
		return;
	}
	bool negative = x.hi < 0;
	unsigned __int128 v = ((unsigned __int128)(uint64_t)x.hi << 64) | x.lo;
	if (negative) {
		v = ~v + 1; /* the magnitude */
	}
	char digits[48];
	char *p = digits + sizeof(digits);
	*--p = '\0';
	do {
		*--p = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v != 0);
	if (negative) {
		*--p = '-';
	}
	ZVAL_STRING(rv, p);
}

/* A bucket's aggregates as ['count', 'sum', 'min', 'max'] entries of `arr`. */
static bool add_stats(zval *arr, const mcds_stats *s)
{
	zval count, sum;
	if (!php_mcds_u64_result(s->count, &count)) {
		return false;
	}
	add_assoc_zval(arr, "count", &count);
	i128_result(s->sum, &sum);
	add_assoc_zval(arr, "sum", &sum);
	add_assoc_long(arr, "min", (zend_long)s->min);
	add_assoc_long(arr, "max", (zend_long)s->max);
	return true;
}

/* A PHP list of buckets; frees the list. */
static bool bucket_list_to_array(mcds_bucket_list *list, zval *rv)
{
	uintptr_t len = 0;
	if (!php_mcds_ok(mcds_bucket_list_len(list, &len))) {
		mcds_bucket_list_free(list);
		return false;
	}
	array_init_size(rv, (uint32_t)MIN(len, UINT32_MAX));
	for (uintptr_t i = 0; i < len; i++) {
		mcds_bucket b;
		zval bucket, start;
		if (!php_mcds_ok(mcds_bucket_list_get(list, i, &b)) || !php_mcds_u64_result(b.start_ms, &start)) {
			mcds_bucket_list_free(list);
			zval_ptr_dtor(rv);
			ZVAL_NULL(rv);
			return false;
		}
		array_init_size(&bucket, 5);
		add_assoc_zval(&bucket, "start_ms", &start);
		add_next_index_zval(rv, &bucket);
		if (!add_stats(&bucket, &b.stats)) {
			mcds_bucket_list_free(list);
			zval_ptr_dtor(rv);
			ZVAL_NULL(rv);
			return false;
		}
	}
	mcds_bucket_list_free(list);
	return true;
}

/* The range arguments of a read, numbered from `arg`. */
static bool range_args(zend_long from, zend_long to, zend_long step, uint32_t arg, uint64_t *f, uint64_t *t,
	uint64_t *s)
{
	return php_mcds_arg_u64(from, arg, f) && php_mcds_arg_u64(to, arg + 1, t)
		&& (s == NULL || php_mcds_arg_u64(step, arg + 2, s));
}

/* $resolutions: a list of [stepMs, retentionMs] pairs of ints, into a new
 * array (efree it) of *count structs; libmcds checks how many there are. */
static mcds_resolution *resolutions_arg(HashTable *ht, uint32_t arg, uintptr_t *count)
{
	uint32_t n = zend_hash_num_elements(ht);
	mcds_resolution *out = safe_emalloc(n ? n : 1, sizeof(*out), 0);
	uintptr_t k = 0;
	zval *pair;
	ZEND_HASH_FOREACH_VAL(ht, pair) {
		ZVAL_DEREF(pair);
		zval *step = Z_TYPE_P(pair) == IS_ARRAY ? zend_hash_index_find(Z_ARRVAL_P(pair), 0) : NULL;
		zval *retention = Z_TYPE_P(pair) == IS_ARRAY ? zend_hash_index_find(Z_ARRVAL_P(pair), 1) : NULL;
		if (step == NULL || retention == NULL || Z_TYPE_P(step) != IS_LONG || Z_TYPE_P(retention) != IS_LONG
			|| zend_hash_num_elements(Z_ARRVAL_P(pair)) != 2) {
			zend_argument_type_error(arg, "must be a list of [stepMs, retentionMs] pairs of ints");
			efree(out);
			return NULL;
		}
		if (!php_mcds_arg_u64(Z_LVAL_P(step), arg, &out[k].step_ms)
			|| !php_mcds_arg_u64(Z_LVAL_P(retention), arg, &out[k].retention_ms)) {
			efree(out);
			return NULL;
		}
		k++;
	} ZEND_HASH_FOREACH_END();
	*count = k;
	return out;
}

static bool php_mcds_timeseries_construct(zval *obj, zval *store_zv, zend_string *name, HashTable *resolutions,
	uint32_t arg)
{
	uintptr_t n = 0;
	mcds_resolution *given = resolutions_arg(resolutions, arg, &n);
	if (given == NULL) {
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_timeseries *ts = NULL;
	mcds_result r = store == NULL ? MCDS_OK : mcds_timeseries_new(store, ZSTR_VAL(name), given, n, &ts);
	efree(given);
	if (store == NULL || !php_mcds_ok(r)) {
		return false;
	}
	return php_mcds_adopt(obj, ts, timeseries_free, store_zv);
}

ZEND_METHOD(Mcds_TimeSeries, __construct)
{
	zval *store;
	zend_string *name;
	HashTable *resolutions;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_ARRAY_HT(resolutions)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_timeseries_construct(ZEND_THIS, store, name, resolutions, 3);
}

ZEND_METHOD(Mcds_TimeSeries, name)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_timeseries, ts);
	char *name = NULL;
	MCDS_TRY(mcds_timeseries_name(ts, &name));
	RETVAL_STRING(name);
	mcds_string_free(name);
}

ZEND_METHOD(Mcds_TimeSeries, resolutions)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_timeseries, ts);
	mcds_resolution got[MAX_RESOLUTIONS];
	uintptr_t n = 0;
	MCDS_TRY(mcds_timeseries_resolutions(ts, got, MAX_RESOLUTIONS, &n));
	array_init_size(return_value, (uint32_t)n);
	for (uintptr_t i = 0; i < n; i++) {
		zval pair, step, retention;
		if (!php_mcds_u64_result(got[i].step_ms, &step) || !php_mcds_u64_result(got[i].retention_ms, &retention)) {
			RETURN_THROWS();
		}
		array_init_size(&pair, 2);
		add_next_index_zval(&pair, &step);
		add_next_index_zval(&pair, &retention);
		add_next_index_zval(return_value, &pair);
	}
}

ZEND_METHOD(Mcds_TimeSeries, withLossCheck)
{
	bool check;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_BOOL(check)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_timeseries, ts);
	mcds_timeseries *derived = NULL;
	MCDS_TRY(mcds_timeseries_with_loss_check(ts, check, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, timeseries_free);
}

ZEND_METHOD(Mcds_TimeSeries, withMaxClockSkew)
{
	zend_long skew;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(skew)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t skew_ms;
	if (!php_mcds_arg_u64(skew, 1, &skew_ms)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_timeseries, ts);
	mcds_timeseries *derived = NULL;
	MCDS_TRY(mcds_timeseries_with_max_clock_skew(ts, skew_ms, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, timeseries_free);
}

ZEND_METHOD(Mcds_TimeSeries, record)
{
	zend_long at, value;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(at)
		Z_PARAM_LONG(value)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t ts_ms;
	if (!php_mcds_arg_u64(at, 1, &ts_ms)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_timeseries, ts);
	MCDS_TRY(mcds_timeseries_record(ts, ts_ms, (int64_t)value));
}

ZEND_METHOD(Mcds_TimeSeries, recordNow)
{
	zend_long value;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(value)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_timeseries, ts);
	MCDS_TRY(mcds_timeseries_record_now(ts, (int64_t)value));
}

/* In a read method: parse ($fromMs, $toMs, $stepMs) into f, t, s and get
 * `ts`, or return with the error thrown. */
#define TS_READ_ARGS()                                          \
	zend_long from_, to_, step_;                                \
	ZEND_PARSE_PARAMETERS_START(3, 3)                           \
		Z_PARAM_LONG(from_)                                     \
		Z_PARAM_LONG(to_)                                       \
		Z_PARAM_LONG(step_)                                     \
	ZEND_PARSE_PARAMETERS_END();                                \
	uint64_t f, t, s;                                           \
	if (!range_args(from_, to_, step_, 1, &f, &t, &s)) {        \
		RETURN_THROWS();                                        \
	}                                                           \
	MCDS_GET_THIS(mcds_timeseries, ts)

ZEND_METHOD(Mcds_TimeSeries, range)
{
	TS_READ_ARGS();
	mcds_bucket_list *list = NULL;
	MCDS_TRY(mcds_timeseries_range(ts, f, t, s, &list));
	if (!bucket_list_to_array(list, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_TimeSeries, aggregate)
{
	TS_READ_ARGS();
	bool found = false;
	mcds_stats stats;
	MCDS_TRY(mcds_timeseries_aggregate(ts, f, t, s, &found, &stats));
	if (!found) {
		RETURN_NULL();
	}
	array_init_size(return_value, 4);
	if (!add_stats(return_value, &stats)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_TimeSeries, count)
{
	TS_READ_ARGS();
	uint64_t n = 0;
	MCDS_TRY(mcds_timeseries_count(ts, f, t, s, &n));
	MCDS_RETURN_U64(n);
}

ZEND_METHOD(Mcds_TimeSeries, sum)
{
	TS_READ_ARGS();
	mcds_i128 sum = {0, 0};
	MCDS_TRY(mcds_timeseries_sum(ts, f, t, s, &sum));
	i128_result(sum, return_value);
}

ZEND_METHOD(Mcds_TimeSeries, avg)
{
	TS_READ_ARGS();
	bool found = false;
	double avg = 0;
	MCDS_TRY(mcds_timeseries_avg(ts, f, t, s, &found, &avg));
	if (!found) {
		RETURN_NULL();
	}
	RETURN_DOUBLE(avg);
}

ZEND_METHOD(Mcds_TimeSeries, min)
{
	TS_READ_ARGS();
	bool found = false;
	int64_t v = 0;
	MCDS_TRY(mcds_timeseries_min(ts, f, t, s, &found, &v));
	if (!found) {
		RETURN_NULL();
	}
	RETURN_LONG((zend_long)v);
}

ZEND_METHOD(Mcds_TimeSeries, max)
{
	TS_READ_ARGS();
	bool found = false;
	int64_t v = 0;
	MCDS_TRY(mcds_timeseries_max(ts, f, t, s, &found, &v));
	if (!found) {
		RETURN_NULL();
	}
	RETURN_LONG((zend_long)v);
}

typedef mcds_result (*combine_fn)(const mcds_timeseries *const *, uintptr_t, uint64_t, uint64_t, uint64_t,
	mcds_bucket_list **);

/* TimeSeries::union and ::intersection: the handles of the TimeSeries in
 * `series` (a TypeError for anything else), then `fn`. */
static void combine(INTERNAL_FUNCTION_PARAMETERS, combine_fn fn)
{
	HashTable *series;
	zend_long from_, to_, step_;
	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_ARRAY_HT(series)
		Z_PARAM_LONG(from_)
		Z_PARAM_LONG(to_)
		Z_PARAM_LONG(step_)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t f, t, s;
	if (!range_args(from_, to_, step_, 2, &f, &t, &s)) {
		RETURN_THROWS();
	}
	uint32_t n = zend_hash_num_elements(series);
	const mcds_timeseries **handles = safe_emalloc(n ? n : 1, sizeof(*handles), 0);
	uintptr_t k = 0;
	zval *item;
	ZEND_HASH_FOREACH_VAL(series, item) {
		ZVAL_DEREF(item);
		if (Z_TYPE_P(item) != IS_OBJECT || !instanceof_function(Z_OBJCE_P(item), php_mcds_timeseries_ce)) {
			zend_argument_type_error(1, "must be a list of Mcds\\TimeSeries, %s given as an element",
				zend_zval_type_name(item));
			efree(handles);
			RETURN_THROWS();
		}
		handles[k] = php_mcds_this_handle(item);
		if (handles[k++] == NULL) {
			efree(handles);
			RETURN_THROWS();
		}
	} ZEND_HASH_FOREACH_END();
	mcds_bucket_list *list = NULL;
	mcds_result r = fn(handles, k, f, t, s, &list);
	efree(handles);
	MCDS_TRY(r);
	if (!bucket_list_to_array(list, return_value)) {
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_TimeSeries, union)
{
	combine(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_timeseries_union);
}

ZEND_METHOD(Mcds_TimeSeries, intersection)
{
	combine(INTERNAL_FUNCTION_PARAM_PASSTHRU, mcds_timeseries_intersection);
}

/* ---- Mcds\PackedSeries ---------------------------------------------------- */

static bool php_mcds_packed_series_construct(zval *obj, zval *store_zv, zend_string *name, zend_long slot_ms,
	zend_long slots_per_period, zend_long width, zend_long retention_ms, uint32_t arg)
{
	uint64_t slot, slots, retention;
	uint32_t w;
	if (!php_mcds_arg_u64(slot_ms, arg, &slot) || !php_mcds_arg_u64(slots_per_period, arg + 1, &slots)
		|| !php_mcds_arg_u32(width, arg + 2, &w) || !php_mcds_arg_u64(retention_ms, arg + 3, &retention)) {
		return false;
	}
	if (slots > UINTPTR_MAX) {
		slots = UINTPTR_MAX; /* a 32-bit build: libmcds refuses it */
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_packed_series *p = NULL;
	if (store == NULL
		|| !php_mcds_ok(mcds_packed_series_new(store, ZSTR_VAL(name), slot, (uintptr_t)slots, w, retention, &p))) {
		return false;
	}
	return php_mcds_adopt(obj, p, packed_series_free, store_zv);
}

ZEND_METHOD(Mcds_PackedSeries, __construct)
{
	zval *store;
	zend_string *name;
	zend_long slot_ms, slots, width, retention_ms;
	ZEND_PARSE_PARAMETERS_START(6, 6)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(slot_ms)
		Z_PARAM_LONG(slots)
		Z_PARAM_LONG(width)
		Z_PARAM_LONG(retention_ms)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_packed_series_construct(ZEND_THIS, store, name, slot_ms, slots, width, retention_ms, 3);
}

ZEND_METHOD(Mcds_PackedSeries, incr)
{
	zend_long at, delta = 1;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_LONG(at)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(delta)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t ts_ms;
	uint32_t d;
	if (!php_mcds_arg_u64(at, 1, &ts_ms) || !php_mcds_arg_u32(delta, 2, &d)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_packed_series, p);
	uint32_t v = 0;
	MCDS_TRY(mcds_packed_series_incr(p, ts_ms, d, &v));
	RETURN_LONG((zend_long)v);
}

ZEND_METHOD(Mcds_PackedSeries, incrNow)
{
	zend_long delta = 1;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(delta)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t d;
	if (!php_mcds_arg_u32(delta, 1, &d)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_packed_series, p);
	uint32_t v = 0;
	MCDS_TRY(mcds_packed_series_incr_now(p, d, &v));
	RETURN_LONG((zend_long)v);
}

ZEND_METHOD(Mcds_PackedSeries, get)
{
	zend_long at;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(at)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t ts_ms;
	if (!php_mcds_arg_u64(at, 1, &ts_ms)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_packed_series, p);
	uint32_t v = 0;
	MCDS_TRY(mcds_packed_series_get(p, ts_ms, &v));
	RETURN_LONG((zend_long)v);
}

ZEND_METHOD(Mcds_PackedSeries, withLossCheck)
{
	bool check;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_BOOL(check)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_packed_series, p);
	mcds_packed_series *derived = NULL;
	MCDS_TRY(mcds_packed_series_with_loss_check(p, check, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, packed_series_free);
}

ZEND_METHOD(Mcds_PackedSeries, withMaxClockSkew)
{
	zend_long skew;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_LONG(skew)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t skew_ms;
	if (!php_mcds_arg_u64(skew, 1, &skew_ms)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_packed_series, p);
	mcds_packed_series *derived = NULL;
	MCDS_TRY(mcds_packed_series_with_max_clock_skew(p, skew_ms, &derived));
	php_mcds_return_derived(return_value, ZEND_THIS, derived, packed_series_free);
}

ZEND_METHOD(Mcds_PackedSeries, range)
{
	zend_long from_, to_;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(from_)
		Z_PARAM_LONG(to_)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t f, t;
	if (!range_args(from_, to_, 0, 1, &f, &t, NULL)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_packed_series, p);
	mcds_slot_list *list = NULL;
	MCDS_TRY(mcds_packed_series_range(p, f, t, &list));
	uintptr_t len = 0;
	if (!php_mcds_ok(mcds_slot_list_len(list, &len))) {
		mcds_slot_list_free(list);
		RETURN_THROWS();
	}
	array_init_size(return_value, (uint32_t)MIN(len, UINT32_MAX));
	for (uintptr_t i = 0; i < len; i++) {
		mcds_slot slot;
		zval entry, start;
		if (!php_mcds_ok(mcds_slot_list_get(list, i, &slot)) || !php_mcds_u64_result(slot.start_ms, &start)) {
			mcds_slot_list_free(list);
			RETURN_THROWS();
		}
		array_init_size(&entry, 2);
		add_assoc_zval(&entry, "start_ms", &start);
		add_assoc_long(&entry, "value", (zend_long)slot.value);
		add_next_index_zval(return_value, &entry);
	}
	mcds_slot_list_free(list);
}

ZEND_METHOD(Mcds_PackedSeries, sum)
{
	zend_long from_, to_;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_LONG(from_)
		Z_PARAM_LONG(to_)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t f, t;
	if (!range_args(from_, to_, 0, 1, &f, &t, NULL)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_packed_series, p);
	uint64_t sum = 0;
	MCDS_TRY(mcds_packed_series_sum(p, f, t, &sum));
	MCDS_RETURN_U64(sum);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, timeSeries)
{
	zend_string *name;
	HashTable *resolutions;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_ARRAY_HT(resolutions)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_timeseries_ce,
		php_mcds_timeseries_construct(return_value, ZEND_THIS, name, resolutions, 2));
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, packedSeries)
{
	zend_string *name;
	zend_long slot_ms, slots, width, retention_ms;
	ZEND_PARSE_PARAMETERS_START(5, 5)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_LONG(slot_ms)
		Z_PARAM_LONG(slots)
		Z_PARAM_LONG(width)
		Z_PARAM_LONG(retention_ms)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_FACTORY(php_mcds_packed_series_ce,
		php_mcds_packed_series_construct(return_value, ZEND_THIS, name, slot_ms, slots, width, retention_ms, 2));
}
