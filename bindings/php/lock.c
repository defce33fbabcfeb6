/*
 * Mcds\Lock: a distributed lock (mcds_lock_*), with the calls Symfony Lock
 * users know and synchronized().
 *
 * The libmcds handle holds at most one lease; php_mcds_lock_state mirrors
 * it: `held` follows every acquire and release result exactly (a release
 * that fails keeps the guard in libmcds, and `held` stays true), and
 * `expires_at` is when the lease ends at the latest by this process's
 * monotonic clock (the time before the acquiring call plus the TTL).
 *
 * Waiting to be added when libmcds has them (the C ABI parity work):
 * refresh() through mcds_lock_extend, fractional TTLs, and isAcquired()
 * asking the server (holder / is_lost) rather than the local clock.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include "php_mcds.h"
#include "zend_exceptions.h"

static void lock_free(void *h) { mcds_lock_free(h); }

bool php_mcds_lock_construct(zval *obj, zval *store_zv, zend_string *name, double ttl, uint32_t arg)
{
	/* 0 goes through: libmcds refuses it with MCDS_INVALID_ARGUMENT. */
	if (!zend_finite(ttl) || ttl < 0 || ttl > (double)UINT32_MAX || ttl != floor(ttl)) {
		zend_argument_value_error(arg,
			"must be a whole number of seconds between 1 and %" PRIu32
			" (fractions of a second need a newer libmcds)", UINT32_MAX);
		return false;
	}
	const mcds_store *store = php_mcds_store_handle(store_zv);
	mcds_lock *h = NULL;
	if (store == NULL || !php_mcds_ok(mcds_lock_new(store, ZSTR_VAL(name), (uint32_t)ttl, &h))) {
		return false;
	}
	if (!php_mcds_adopt(obj, h, lock_free, store_zv)) {
		return false;
	}
	php_mcds_object *o = Z_MCDS_P(obj);
	o->lock.name = zend_string_copy(name);
	o->lock.ttl = ttl;
	o->lock.held = false;
	return true;
}

ZEND_METHOD(Mcds_Lock, __construct)
{
	zval *store;
	zend_string *name;
	double ttl = 30.0;
	ZEND_PARSE_PARAMETERS_START(2, 3)
		Z_PARAM_OBJECT_OF_CLASS(store, php_mcds_store_ce)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(ttl)
	ZEND_PARSE_PARAMETERS_END();
	php_mcds_lock_construct(ZEND_THIS, store, name, ttl, 3);
}

static void took_lease(php_mcds_object *o, double started)
{
	o->lock.held = true;
	o->lock.expires_at = started + o->lock.ttl;
}

static bool locally_live(const php_mcds_object *o)
{
	return o->lock.held && php_mcds_now() < o->lock.expires_at;
}

/* Let go of a lease this handle holds but that has expired by the local
 * clock, so the handle can take a new one. Whether it was still ours does
 * not matter here; an error is thrown. */
static bool drop_expired(php_mcds_object *o, mcds_lock *h)
{
	bool released = false;
	if (!php_mcds_ok(mcds_lock_release(h, &released))) {
		return false;
	}
	o->lock.held = false;
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
	if (locally_live(o)) {
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

ZEND_METHOD(Mcds_Lock, refresh)
{
	double ttl = 0;
	bool ttl_is_null = true;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(ttl, ttl_is_null)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_lock, h);
	(void)h;
	(void)ttl;
	/* TODO(C ABI parity): mcds_lock_extend(h, ttl_ms) and, on success,
	 * took_lease(o, started) with the new TTL. */
	zend_throw_exception_ex(php_mcds_exception_class(MCDS_UNSUPPORTED), MCDS_UNSUPPORTED,
		"Mcds\\Lock::refresh() needs lock extend in libmcds (mcds_lock_extend), which libmcds %s "
		"does not have; the lease was left as it was",
		mcds_version());
}

ZEND_METHOD(Mcds_Lock, isAcquired)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_lock, h);
	(void)h;
	RETURN_BOOL(locally_live(Z_MCDS_P(ZEND_THIS)));
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
	o->lock.held = false;
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
			o->lock.held = false;
			if (!released && !threw) {
				zval_ptr_dtor(&retval);
				zend_throw_exception_ex(php_mcds_lock_lost_exception_ce, 0,
					"the lease on lock \"%s\" expired while the callback ran (TTL %.0f s): another owner "
					"may have held the lock at the same time; give the lock a longer TTL",
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
