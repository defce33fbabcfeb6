/*
 * The mcds PHP extension: what every class file shares.
 *
 * Layout: mcds.c registers the module, the classes (from the generated
 * mcds_arginfo.h, which only mcds.c includes) and the exceptions, and
 * holds the helpers below; each class has its own file (store.c,
 * counter.c, lock.c, ...) with its methods. mcds_classes.h lists the
 * handle classes once: their class entries below, mcds.c's MINIT and
 * config.m4's sources all come from it. To wrap a new libmcds function:
 * declare the method in mcds.stub.php, run ./gen-arginfo.sh, write the
 * ZEND_METHOD in the class's file.
 *
 * A new class is four files: its .c file (its ZEND_METHODs), its
 * declaration in mcds.stub.php, the regenerated mcds_arginfo.h
 * (./gen-arginfo.sh), and one line in mcds_classes.h; plus its .c file's
 * line in package.xml for PECL (scripts/check-pecl.sh checks it). Its
 * Mcds\Store factory (declared with Mcds\Store in the stub) is written in
 * its own .c file too, beside the constructor both share: nothing in
 * store.c or here changes.
 *
 * Every object is a php_mcds_object: the libmcds handle (NULL until the
 * constructor succeeds: every method checks it before any libmcds call),
 * the function that frees it, the Mcds\Store zval it was made from, so
 * the store outlives every structure made from it whatever order PHP
 * destroys them in, and a callable (a ViewCounter's loader), both reported
 * to the cycle collector. (Mcds\Decision and Mcds\Cursor are plain
 * objects with readonly properties.)
 */
#ifndef PHP_MCDS_H
#define PHP_MCDS_H

#include <unistd.h>
#include "php.h"
#include "mcds.h"
#include "mcds_classes.h"

#define PHP_MCDS_EXTNAME "mcds"
#define PHP_MCDS_VERSION "0.1.0"

extern zend_module_entry mcds_module_entry;
#define phpext_mcds_ptr &mcds_module_entry

/* The lease a Mcds\Lock object holds, as this process knows it. */
typedef struct {
	zend_string *name;
	double ttl;          /* seconds */
	bool held;           /* libmcds holds a guard for this handle */
	bool auto_extending; /* mcds_lock_auto_extend renews the lease held */
	double expires_at;   /* monotonic seconds: acquired (or refreshed) at + ttl */
} php_mcds_lock_state;

typedef struct {
	void *handle;                 /* the mcds_* handle, or NULL */
	void (*free_handle)(void *);  /* mcds_<type>_free */
	zval store;                   /* the Mcds\Store (UNDEF for a store) */
	zval callable;                /* Mcds\ViewCounter's loader (else UNDEF) */
	zend_fcall_info_cache fcc;    /* ... as resolved where it was passed */
	php_mcds_lock_state lock;     /* Mcds\Lock only */
	bool persistent;              /* Mcds\Store only: on a persistent store's
	                               * connections (a $persistentId) */
	pid_t pid;                    /* the process that made the handle: after
	                               * pcntl_fork the child neither uses nor
	                               * frees it (its connections and leases are
	                               * the parent's) */
	zend_object std;
} php_mcds_object;

static inline php_mcds_object *php_mcds_from_obj(zend_object *obj)
{
	return (php_mcds_object *)((char *)obj - XtOffsetOf(php_mcds_object, std));
}
#define Z_MCDS_P(zv) php_mcds_from_obj(Z_OBJ_P(zv))

/* Class entries (set in MINIT): php_mcds_<stem>_ce for each handle class
 * of mcds_classes.h, and the plain classes and exceptions others use. */
#define PHP_MCDS_CE_EXTERN(class, stem, file) extern zend_class_entry *php_mcds_##stem##_ce;
MCDS_HANDLE_CLASSES(PHP_MCDS_CE_EXTERN)
#undef PHP_MCDS_CE_EXTERN
extern zend_class_entry *php_mcds_decision_ce, *php_mcds_cursor_ce;
extern zend_class_entry *php_mcds_exception_ce, *php_mcds_lock_lost_exception_ce,
	*php_mcds_callback_failed_exception_ce;

/* ---- helpers (mcds.c) ---------------------------------------------------- */

/* Throw the Mcds\Exception subclass for `code`, with the thread's
 * mcds_last_error_message(): call it right after the failing call. */
void php_mcds_throw(mcds_result code);

/* The Mcds\Exception subclass for a result code (its family for a code
 * this header does not know). */
zend_class_entry *php_mcds_exception_class(mcds_result code);

/* True on MCDS_OK; otherwise throws (php_mcds_throw) and returns false. */
static inline bool php_mcds_ok(mcds_result code)
{
	if (EXPECTED(code == MCDS_OK)) {
		return true;
	}
	php_mcds_throw(code);
	return false;
}

/* The handle of $this, or NULL with an Error thrown (an object whose
 * constructor never ran or failed). */
void *php_mcds_this_handle(zval *this_zv);
#define MCDS_THIS(type) ((type *)php_mcds_this_handle(ZEND_THIS))

/* In a method: `type *var` = this object's handle, or return with the
 * Error thrown. */
#define MCDS_GET_THIS(type, var)          \
	type *var = MCDS_THIS(type);          \
	if (UNEXPECTED(var == NULL)) {        \
		RETURN_THROWS();                  \
	}

/* In a method: make a libmcds call; on an error, return with it thrown. */
#define MCDS_TRY(call)                    \
	do {                                  \
		if (!php_mcds_ok(call)) {         \
			RETURN_THROWS();              \
		}                                 \
	} while (0)

/* In a method: return a uint64_t as an int. */
#define MCDS_RETURN_U64(v)                                  \
	do {                                                    \
		if (!php_mcds_u64_result((v), return_value)) {      \
			RETURN_THROWS();                                \
		}                                                   \
		return;                                             \
	} while (0)

/* Return a u64 as a PHP int, or past PHP_INT_MAX as its numeric string
 * (never an exception: the value is the answer of a write that happened). */
#define MCDS_RETURN_U64_OR_STRING(v)                        \
	do {                                                    \
		php_mcds_u64_int_or_string((v), return_value);      \
		return;                                             \
	} while (0)

/* The store handle of a Mcds\Store zval, or NULL with an Error thrown. */
const mcds_store *php_mcds_store_handle(zval *store_zv);

/* Give a freshly constructed object its handle and its store. Throws an
 * Error (and frees `handle`) if the object already has one: __construct
 * called twice. */
bool php_mcds_adopt(zval *obj_zv, void *handle, void (*free_handle)(void *), zval *store_zv);

/* Return (in `rv`) a new object of this_zv's class on this_zv's store,
 * holding `handle`: a handle derived from this_zv's (mcds_*_with_ttl), the
 * caller's, freed with `free_handle` when the new object goes. */
void php_mcds_return_derived(zval *rv, zval *this_zv, void *handle, void (*free_handle)(void *));

/* Argument conversions: a ValueError naming argument `arg` when the PHP
 * value does not fit the C type. */
bool php_mcds_arg_u64(zend_long v, uint32_t arg, uint64_t *out);
bool php_mcds_arg_u32(zend_long v, uint32_t arg, uint32_t *out);
/* Call the PHP callable fn (as resolved in fcc when it was passed) with
 * count params; its result in rv. For the functions libmcds calls back
 * (a loader, an update function), inside their zend_try. */
zend_result php_mcds_call(zval *fn, zend_fcall_info_cache *fcc, zval *params, uint32_t count, zval *rv);
/* A TTL in whole seconds for mcds_*_with_ttl: 0 (never expires) to
 * UINT32_MAX. */
bool php_mcds_arg_ttl(zend_long seconds, uint32_t arg, uint32_t *out_secs);
/* Seconds (finite, >= 0) to whole milliseconds, rounded up. */
bool php_mcds_arg_ms(double seconds, uint32_t arg, uint32_t *out_ms);
/* Seconds as a whole number (a lock's TTL: libmcds leases are whole
 * seconds), 1 to UINT32_MAX; anything else is a ValueError. */
bool php_mcds_arg_whole_secs(double seconds, uint32_t arg, uint32_t *out_secs);

/* Members for the mcds_*_add_many calls: parallel arrays of pointers and
 * lengths over the strings of a PHP array (in the caller's strict_types
 * mode: ints and the like become strings in coercive mode, else a
 * TypeError naming argument `arg`). Release with php_mcds_members_free. */
typedef struct {
	const uint8_t **data;
	uintptr_t *lens;
	uintptr_t count;
	zend_string **held; /* the strings made or referenced, released after */
} php_mcds_members;
bool php_mcds_members_from_array(HashTable *ht, uint32_t arg, php_mcds_members *out);
void php_mcds_members_free(php_mcds_members *m);

/* Check that every variadic argument is an instance of `ce` (internal
 * functions check their own variadic argument types); a TypeError
 * otherwise. `first_arg` is the argument number of args[0]. */
bool php_mcds_check_variadic(zval *args, uint32_t argc, zend_class_entry *ce, uint32_t first_arg);

/* A uint64_t result as a PHP int; an Mcds\Exception past PHP_INT_MAX. */
bool php_mcds_u64_result(uint64_t v, zval *rv);

/* A uint64_t count as a PHP int, or past PHP_INT_MAX as the numeric string
 * of its digits: for results of calls that already acted (an increment
 * applied must not be reported as a failure). */
void php_mcds_u64_int_or_string(uint64_t v, zval *rv);

/* Copy a mcds_bytes_list into a PHP list of strings and free it. */
bool php_mcds_bytes_list_to_array(mcds_bytes_list *list, zval *rv);

/* A value libmcds returned as a one-item list, or NULL for none: its
 * string (or null) in rv, the list freed. `call` names the libmcds
 * function for the error an empty list would be (a bug in libmcds). */
bool php_mcds_optional_bytes(mcds_bytes_list *list, const char *call, zval *rv);

/* Monotonic seconds (for the lock's local expiry). */
double php_mcds_now(void);

/* The php.ini settings (mcds.c): mcds.servers, mcds.connect_timeout,
 * mcds.io_timeout, mcds.prefix; read by Mcds\Store::fromConfig. */
#define PHP_MCDS_INI_SERVERS "mcds.servers"
#define PHP_MCDS_INI_CONNECT_TIMEOUT "mcds.connect_timeout"
#define PHP_MCDS_INI_IO_TIMEOUT "mcds.io_timeout"
#define PHP_MCDS_INI_PREFIX "mcds.prefix"

/* Free the persistent stores of this process (store.c; MSHUTDOWN). */
void php_mcds_persistent_stores_shutdown(void);


/* Each class's constructor (php_mcds_<class>_construct, static in its own
 * file) serves both `new Mcds\X(...)` and Mcds\Store's factory of it,
 * which lives in the same file: it constructs the object in `obj` (already
 * object_init_ex'ed); on failure an exception is pending and it returns
 * false. Its `arg` is the argument number of the first parameter after
 * $name, for ValueErrors: 3 in `new X($store, $name, ...)`, 2 in
 * `$store->x($name, ...)`. */

/* The options of a lock (Mcds\Lock::__construct, Mcds\Store::lock). */
typedef struct {
	double ttl;
	bool fencing;
	zend_string *owner_label;   /* NULL: none */
	bool backoff_min_set, backoff_max_set;
	double backoff_min;         /* seconds, when set */
	double backoff_max;
} php_mcds_lock_options;

/* The body of a Mcds\Store factory: `return_value` becomes an instance of
 * `ce` constructed by `call` (its class's php_mcds_<class>_construct); on
 * failure the half-made object goes and the call throws. */
#define MCDS_FACTORY(ce, call)                                   \
	do {                                                         \
		object_init_ex(return_value, (ce));                      \
		if (!(call)) {                                           \
			zval_ptr_dtor(return_value);                         \
			ZVAL_NULL(return_value);                             \
			RETURN_THROWS();                                     \
		}                                                        \
	} while (0)

#endif /* PHP_MCDS_H */
