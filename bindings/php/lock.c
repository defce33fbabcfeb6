/*
 * Mcds\Lock: a distributed lock (mcds_lock_*), with the calls Symfony Lock
 * users know (acquire, refresh, isAcquired, release), synchronized(), and
 * what libmcds adds: fencing tokens, owner labels, backoff, auto-extension,
 * the holder.
 *
 * The libmcds handle holds at most one lease; php_mcds_lock_state mirrors
 * it: `held` follows every acquire and release result exactly (a release
 * that fails keeps the guard in libmcds, and `held` stays true), and
 * `expires_at` is when the lease ends at the latest by this process's
 * monotonic clock (the time before the acquiring or refreshing call plus
 * the TTL), unless `auto_extending` (libmcds renews it in the background).
 * A lease libmcds knows to be lost (mcds_lock_is_lost) is never live.
 *
 * acquire() on an object whose lease is live by that account answers true
 * without a round trip (what makes synchronized() reentrant); isAcquired()
 * asks the server (mcds_lock_holder against mcds_lock_owner_token).
 *
 * TTLs are whole seconds: mcds_lock_new and mcds_lock_extend take them so.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include "php_mcds.h"
#include "zend_exceptions.h"

static void lock_free(void *h) { mcds_lock_free(h); }

/* The longest backoff ceiling libmcds accepts: a minute. */
#define MAX_BACKOFF_SECS 60

/* A backoff bound in seconds (0 < s <= a minute) as whole ms, rounded up. */
static bool backoff_ms(double seconds, uint32_t arg, uint32_t *ms)
{
	if (!zend_finite(seconds) || seconds <= 0 || seconds > MAX_BACKOFF_SECS) {
		zend_argument_value_error(arg, "must be greater than 0 and at most %d seconds", MAX_BACKOFF_SECS);
		return false;
	}
	*ms = (uint32_t)ceil(seconds * 1000.0);
	return true;
}

/* Replace *h by the handle `derived` made from it (mcds_lock_with_*, whose
 * result is r), freeing the old one; on failure *h is freed and NULL. An
 * MCDS_INVALID_ARGUMENT (a bad label, say) is a ValueError for `arg`. The
 * error is thrown before the free, which is an mcds call too and would
 * clear the message. */
static bool derive(mcds_lock **h, mcds_result r, mcds_lock *derived, uint32_t arg)
{
	bool ok;
	if (r == MCDS_INVALID_ARGUMENT) {
		zend_argument_value_error(arg, "was refused by libmcds: %s", mcds_last_error_message());
		ok = false;
	} else {
		ok = php_mcds_ok(r);
	}
	mcds_lock_free(*h);
	*h = ok ? derived : NULL;
	return ok;
}

/* A lock named `name` (mcds_lock_new), or on exactly the key `name` when
 * `exact` (mcds_lock_new_with_key), with the options. */
static bool lock_construct(zval *obj, zval *store_zv, zend_string *name, bool exact,
	const php_mcds_lock_options *opts, uint32_t arg)
{
	/* Arguments: arg = $ttl, then $fencing, $ownerLabel, $backoffMin, $backoffMax. */
	uint32_t ttl_secs, min_ms = 1, max_ms = 50; /* libmcds's default backoff */
	bool backoff = opts->backoff_min_set || opts->backoff_max_set;
	if (!php_mcds_arg_whole_secs(opts->ttl, arg, &ttl_secs)
		|| (opts->backoff_min_set && !backoff_ms(opts->backoff_min, arg + 3, &min_ms))
		|| (opts->backoff_max_set && !backoff_ms(opts->backoff_max, arg + 4, &max_ms))) {
		return false;
	}
	if (backoff && min_ms > max_ms) {
		zend_argument_value_error(opts->backoff_max_set ? arg + 4 : arg + 3,
			"must leave $backoffMin (%.3f s) at most $backoffMax (%.3f s)", min_ms / 1000.0, max_ms / 1000.0);
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_lock *h = NULL, *derived = NULL;
	if (store == NULL) {
		return false;
	}
	mcds_result made = exact
		? mcds_lock_new_with_key(store, (const uint8_t *)ZSTR_VAL(name), ZSTR_LEN(name), ttl_secs, &h)
		: mcds_lock_new(store, ZSTR_VAL(name), ttl_secs, &h);
	if (!php_mcds_ok(made)) {
		return false;
	}
	mcds_result r;
	if (opts->fencing) {
		r = mcds_lock_with_fencing(h, true, &derived);
		if (!derive(&h, r, derived, arg + 1)) {
			return false;
		}
	}
	if (opts->owner_label != NULL && ZSTR_LEN(opts->owner_label) > 0) {
		r = mcds_lock_with_owner_label(h, ZSTR_VAL(opts->owner_label), &derived);
		if (!derive(&h, r, derived, arg + 2)) {
			return false;
		}
	}
	if (backoff) {
		r = mcds_lock_with_backoff(h, min_ms, max_ms, &derived);
		if (!derive(&h, r, derived, arg + 3)) {
			return false;
		}
	}
	if (!php_mcds_adopt(obj, h, lock_free, store_zv)) {
		return false;
	}
	php_mcds_object *o = Z_MCDS_P(obj);
	o->lock.name = zend_string_copy(name);
	o->lock.ttl = opts->ttl;
	o->lock.held = false;
	o->lock.auto_extending = false;
	return true;
}

static bool php_mcds_lock_construct(zval *obj, zval *store_zv, zend_string *name,
	const php_mcds_lock_options *opts, uint32_t arg)
{
	return lock_construct(obj, store_zv, name, false, opts, arg);
}

ZEND_METHOD(Mcds_Lock, __construct)
{
	zval *store;
	zend_string *name;
	php_mcds_lock_options opts = {.ttl = 30.0};
	bool min_null = true, max_null = true;
	ZEND_PARSE_PARAMETERS_START(2, 7)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(opts.ttl)
		Z_PARAM_BOOL(opts.fencing)
		Z_PARAM_PATH_STR_OR_NULL(opts.owner_label)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_min, min_null)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_max, max_null)
	ZEND_PARSE_PARAMETERS_END();
	opts.backoff_min_set = !min_null;
	opts.backoff_max_set = !max_null;
	php_mcds_lock_construct(ZEND_THIS, store, name, &opts, 3);
}

/* Lock::withKey: the lock on exactly $key (bytes, checked by libmcds: a
 * NUL byte is its InvalidKeyException, not a TypeError), with the options
 * of __construct. */
ZEND_METHOD(Mcds_Lock, withKey)
{
	zval *store;
	zend_string *key;
	php_mcds_lock_options opts = {.ttl = 30.0};
	bool min_null = true, max_null = true;
	ZEND_PARSE_PARAMETERS_START(2, 7)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_STR(key)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(opts.ttl)
		Z_PARAM_BOOL(opts.fencing)
		Z_PARAM_PATH_STR_OR_NULL(opts.owner_label)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_min, min_null)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_max, max_null)
	ZEND_PARSE_PARAMETERS_END();
	opts.backoff_min_set = !min_null;
	opts.backoff_max_set = !max_null;
	object_init_ex(return_value, php_mcds_lock_ce);
	if (!lock_construct(return_value, store, key, true, &opts, 3)) {
		zval_ptr_dtor(return_value);
		ZVAL_NULL(return_value);
		RETURN_THROWS();
	}
}

static void took_lease(php_mcds_object *o, double started)
{
	o->lock.held = true;
	o->lock.auto_extending = false;
	o->lock.expires_at = started + o->lock.ttl;
}

static void lease_gone(php_mcds_object *o)
{
	o->lock.held = false;
	o->lock.auto_extending = false;
}

/* Whether libmcds knows the lease it holds to be lost (no round trip).
 * A handle holding nothing counts as lost. */
static bool known_lost(mcds_lock *h)
{
	bool lost = false;
	return mcds_lock_is_lost(h, &lost) != MCDS_OK || lost;
}

static bool locally_live(const php_mcds_object *o, mcds_lock *h)
{
	return o->lock.held && (o->lock.auto_extending || php_mcds_now() < o->lock.expires_at)
		&& !known_lost(h);
}

/* Let go of a lease this handle holds but that has expired by the local
 * clock or is known to be lost, so the handle can take a new one. Whether
 * it was still ours does not matter here; an error is thrown. */
static bool drop_expired(php_mcds_object *o, mcds_lock *h)
{
	bool released = false;
	if (!php_mcds_ok(mcds_lock_release(h, &released))) {
		return false;
	}
	lease_gone(o);
	return true;
}

typedef enum { WAIT_ACQUIRED, WAIT_TIMED_OUT, WAIT_FAILED } wait_outcome;

/* mcds_lock_acquire in slices of at most a second, so a wait of any length
 * (`forever`, or up to timeout_ms) still notices PHP's max_execution_time
 * between slices. At least one attempt, even with a timeout of 0. */
static wait_outcome lock_wait(php_mcds_object *o, mcds_lock *h, bool forever, uint32_t timeout_ms)
{
	double deadline = php_mcds_now() + timeout_ms / 1000.0;
	for (;;) {
		uint32_t slice = 1000;
		if (!forever) {
			double left = deadline - php_mcds_now();
			slice = left <= 0 ? 0 : (uint32_t)MIN(1000.0, ceil(left * 1000.0));
		}
		double started = php_mcds_now();
		mcds_result r = mcds_lock_acquire(h, slice);
		if (r == MCDS_OK) {
			took_lease(o, started);
			return WAIT_ACQUIRED;
		}
		if (r != MCDS_WAIT_TIMEOUT) {
			php_mcds_throw(r);
			return WAIT_FAILED;
		}
		if ((!forever && php_mcds_now() >= deadline) || zend_atomic_bool_load_ex(&EG(timed_out))) {
			return WAIT_TIMED_OUT;
		}
	}
}

/* The handle, ready to take a lease: NULL with an exception thrown. Sets
 * *already when this object holds a live lease. */
static mcds_lock *ready_to_acquire(zval *this_zv, bool *already)
{
	mcds_lock *h = php_mcds_this_handle(this_zv);
	php_mcds_object *o = Z_MCDS_P(this_zv);
	*already = false;
	if (h == NULL) {
		return NULL;
	}
	if (locally_live(o, h)) {
		*already = true;
	} else if (o->lock.held && !drop_expired(o, h)) {
		return NULL;
	}
	return h;
}

ZEND_METHOD(Mcds_Lock, acquire)
{
	bool blocking = false;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(blocking)
	ZEND_PARSE_PARAMETERS_END();
	bool already;
	mcds_lock *h = ready_to_acquire(ZEND_THIS, &already);
	if (h == NULL) {
		RETURN_THROWS();
	}
	if (already) {
		RETURN_TRUE;
	}
	php_mcds_object *o = Z_MCDS_P(ZEND_THIS);
	if (!blocking) {
		bool acquired = false;
		double started = php_mcds_now();
		MCDS_TRY(mcds_lock_try_acquire(h, &acquired));
		if (acquired) {
			took_lease(o, started);
		}
		RETURN_BOOL(acquired);
	}
	switch (lock_wait(o, h, true, 0)) {
	case WAIT_ACQUIRED:
		RETURN_TRUE;
	case WAIT_TIMED_OUT: /* max_execution_time: the engine takes over */
		RETURN_FALSE;
	default:
		RETURN_THROWS();
	}
}

ZEND_METHOD(Mcds_Lock, acquireWithin)
{
	double timeout;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_DOUBLE(timeout)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t timeout_ms;
	if (!php_mcds_arg_ms(timeout, 1, &timeout_ms)) {
		RETURN_THROWS();
	}
	bool already;
	mcds_lock *h = ready_to_acquire(ZEND_THIS, &already);
	if (h == NULL) {
		RETURN_THROWS();
	}
	if (already) {
		RETURN_TRUE;
	}
	switch (lock_wait(Z_MCDS_P(ZEND_THIS), h, false, timeout_ms)) {
	case WAIT_ACQUIRED:
		RETURN_TRUE;
	case WAIT_TIMED_OUT:
		RETURN_FALSE;
	default:
		RETURN_THROWS();
	}
}

/* A TTL argument in whole seconds: $ttl, or the lock's TTL when null. */
static bool ttl_arg(const php_mcds_object *o, double ttl, bool ttl_is_null, uint32_t arg, uint32_t *secs)
{
	if (ttl_is_null) {
		*secs = (uint32_t)o->lock.ttl;
		return true;
	}
	return php_mcds_arg_whole_secs(ttl, arg, secs);
}

ZEND_METHOD(Mcds_Lock, refresh)
{
	double ttl = 0;
	bool ttl_is_null = true;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(ttl, ttl_is_null)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_object *o = Z_MCDS_P(ZEND_THIS);
	uint32_t secs;
	if (!ttl_arg(o, ttl, ttl_is_null, 1, &secs)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_lock, h);
	double started = php_mcds_now();
	bool extended = false;
	/* Holding nothing (never acquired, released): MCDS_INVALID_ARGUMENT. */
	MCDS_TRY(mcds_lock_extend(h, secs, &extended));
	if (!extended) {
		zend_throw_exception_ex(php_mcds_lock_lost_exception_ce, 0,
			"the lease on lock \"%s\" was lost before refresh() (expired, evicted or taken by another "
			"owner, who keeps it): another owner may have held the lock meanwhile; nothing was changed",
			ZSTR_VAL(o->lock.name));
		RETURN_THROWS();
	}
	o->lock.expires_at = started + secs;
}

ZEND_METHOD(Mcds_Lock, autoExtend)
{
	double ttl = 0;
	bool ttl_is_null = true;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(ttl, ttl_is_null)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_object *o = Z_MCDS_P(ZEND_THIS);
	uint32_t secs;
	if (!ttl_arg(o, ttl, ttl_is_null, 1, &secs)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_lock, h);
	MCDS_TRY(mcds_lock_auto_extend(h, secs));
	o->lock.auto_extending = true;
}

ZEND_METHOD(Mcds_Lock, isLost)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	if (!Z_MCDS_P(ZEND_THIS)->lock.held) {
		RETURN_FALSE;
	}
	bool lost = false;
	MCDS_TRY(mcds_lock_is_lost(h, &lost));
	RETURN_BOOL(lost);
}

ZEND_METHOD(Mcds_Lock, isAcquired)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	if (!Z_MCDS_P(ZEND_THIS)->lock.held || known_lost(h)) {
		RETURN_FALSE;
	}
	char *token = NULL, *holder = NULL;
	MCDS_TRY(mcds_lock_owner_token(h, &token));
	mcds_result r = mcds_lock_holder(h, &holder);
	bool ours = r == MCDS_OK && holder != NULL && strcmp(holder, token) == 0;
	mcds_string_free(holder);
	mcds_string_free(token);
	MCDS_TRY(r);
	RETURN_BOOL(ours);
}

ZEND_METHOD(Mcds_Lock, getFencingToken)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	uint64_t token = 0;
	MCDS_TRY(mcds_lock_fencing_token(h, &token));
	MCDS_RETURN_U64_OR_STRING(token);
}

/* A string from libmcds (or NULL) as a PHP string (or null), freed. */
static void return_mcds_string(zval *return_value, char *s)
{
	if (s == NULL) {
		RETURN_NULL();
	}
	RETVAL_STRING(s);
	mcds_string_free(s);
}

ZEND_METHOD(Mcds_Lock, getHolder)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	char *holder = NULL;
	MCDS_TRY(mcds_lock_holder(h, &holder));
	return_mcds_string(return_value, holder);
}

ZEND_METHOD(Mcds_Lock, getOwnerToken)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	if (!Z_MCDS_P(ZEND_THIS)->lock.held) {
		RETURN_NULL();
	}
	char *token = NULL;
	MCDS_TRY(mcds_lock_owner_token(h, &token));
	return_mcds_string(return_value, token);
}

ZEND_METHOD(Mcds_Lock, release)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	php_mcds_object *o = Z_MCDS_P(ZEND_THIS);
	if (!o->lock.held) {
		RETURN_FALSE;
	}
	bool released = false;
	MCDS_TRY(mcds_lock_release(h, &released));
	lease_gone(o);
	RETURN_BOOL(released);
}

ZEND_METHOD(Mcds_Lock, synchronized)
{
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	double timeout = 0;
	bool timeout_is_null = true;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(timeout, timeout_is_null)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t timeout_ms = 0;
	if (!timeout_is_null && !php_mcds_arg_ms(timeout, 2, &timeout_ms)) {
		RETURN_THROWS();
	}
	bool already;
	mcds_lock *h = ready_to_acquire(ZEND_THIS, &already);
	if (h == NULL) {
		RETURN_THROWS();
	}
	php_mcds_object *o = Z_MCDS_P(ZEND_THIS);
	/* Reentrant: inside an outer synchronized() or acquire() on this
	 * object, run the callback and leave the lease to the outer owner. */
	if (!already) {
		switch (lock_wait(o, h, timeout_is_null, timeout_ms)) {
		case WAIT_ACQUIRED:
			break;
		case WAIT_TIMED_OUT:
			if (!zend_atomic_bool_load_ex(&EG(timed_out))) {
				zend_throw_exception_ex(php_mcds_exception_class(MCDS_WAIT_TIMEOUT), MCDS_WAIT_TIMEOUT, "lock \"%s\" stayed taken for %.3f s", ZSTR_VAL(o->lock.name), timeout);
			}
			RETURN_THROWS();
		default:
			RETURN_THROWS();
		}
	}

	zval retval;
	ZVAL_UNDEF(&retval);
	fci.retval = &retval;
	fci.param_count = 0;
	fci.params = NULL;
	zend_call_function(&fci, &fcc);
	bool threw = EG(exception) != NULL;

	if (!already && o->lock.held) {
		bool released = false;
		mcds_result r = mcds_lock_release(h, &released);
		if (r == MCDS_OK) {
			lease_gone(o);
			if (!released && !threw) {
				zval_ptr_dtor(&retval);
				zend_throw_exception_ex(php_mcds_lock_lost_exception_ce, 0,
					"the lease on lock \"%s\" expired while the callback ran (TTL %.0f s): another owner "
					"may have held the lock at the same time; give the lock a longer TTL, or call autoExtend() in "
					"the callback",
					ZSTR_VAL(o->lock.name), o->lock.ttl);
				RETURN_THROWS();
			}
		} else if (!threw) {
			/* libmcds kept the guard: release() retries, freeing releases. */
			php_mcds_throw(r);
			zval_ptr_dtor(&retval);
			RETURN_THROWS();
		}
	}
	if (threw) {
		zval_ptr_dtor(&retval);
		RETURN_THROWS();
	}
	ZVAL_COPY_VALUE(return_value, &retval);
}

ZEND_METHOD(Mcds_Lock, getName)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	(void)h;
	RETURN_STR_COPY(Z_MCDS_P(ZEND_THIS)->lock.name);
}

ZEND_METHOD(Mcds_Lock, getTtl)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	(void)h;
	RETURN_DOUBLE(Z_MCDS_P(ZEND_THIS)->lock.ttl);
}

/* Mcds\Store's factory of this class (declared with Mcds\Store in
 * mcds.stub.php): beside its constructor. */
ZEND_METHOD(Mcds_Store, lock)
{
	zend_string *name;
	php_mcds_lock_options opts = {.ttl = 30.0};
	bool min_null = true, max_null = true;
	ZEND_PARSE_PARAMETERS_START(1, 6)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(opts.ttl)
		Z_PARAM_BOOL(opts.fencing)
		Z_PARAM_PATH_STR_OR_NULL(opts.owner_label)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_min, min_null)
		Z_PARAM_DOUBLE_OR_NULL(opts.backoff_max, max_null)
	ZEND_PARSE_PARAMETERS_END();
	opts.backoff_min_set = !min_null;
	opts.backoff_max_set = !max_null;
	MCDS_FACTORY(php_mcds_lock_ce, php_mcds_lock_construct(return_value, ZEND_THIS, name, &opts, 2));
}
