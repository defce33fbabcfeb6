/*
 * The mcds PHP extension: the module, the class registrations, the
 * exception hierarchy and the helpers every class file uses (php_mcds.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <time.h>

#include "php.h"
#include "ext/standard/info.h"
#include "zend_exceptions.h"
#include "ext/spl/spl_exceptions.h"

#include "php_mcds.h"
#include "mcds_arginfo.h"

/* The handle classes' entries, from mcds_classes.h. */
#define PHP_MCDS_CE_DEFINE(class, stem, file) zend_class_entry *php_mcds_##stem##_ce;
MCDS_HANDLE_CLASSES(PHP_MCDS_CE_DEFINE)
#undef PHP_MCDS_CE_DEFINE
zend_class_entry *php_mcds_decision_ce, *php_mcds_cursor_ce;

zend_class_entry *php_mcds_exception_ce, *php_mcds_lock_lost_exception_ce,
	*php_mcds_callback_failed_exception_ce;
static zend_class_entry *unsupported_ce, *internal_ce, *invalid_key_ce, *value_too_large_ce, *invalid_argument_ce,
	*non_numeric_ce, *corrupt_ce, *lost_ce, *backend_ce, *io_ce, *server_down_ce, *timeout_ce,
	*ambiguous_ce, *out_of_memory_ce, *server_error_ce, *protocol_ce, *conflict_ce,
	*wait_timeout_ce;

static zend_object_handlers php_mcds_handlers;

/* ---- objects ------------------------------------------------------------- */

static zend_object *php_mcds_create_object(zend_class_entry *ce)
{
	php_mcds_object *o = zend_object_alloc(sizeof(php_mcds_object), ce);
	o->handle = NULL;
	o->free_handle = NULL;
	ZVAL_UNDEF(&o->store);
	ZVAL_UNDEF(&o->callable);
	o->fcc = empty_fcall_info_cache;
	memset(&o->lock, 0, sizeof(o->lock));
	o->persistent = false;
	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &php_mcds_handlers;
	return &o->std;
}

/* Frees the handle first (a lock's free releases a lease it still holds,
 * through the store), then drops the store and callable references. */
static void php_mcds_free_obj(zend_object *obj)
{
	php_mcds_object *o = php_mcds_from_obj(obj);
	/* A handle of the parent of a fork is left alone: freeing a lock
	 * would release the parent's lease over the parent's connection. */
	if (o->handle != NULL && o->free_handle != NULL && o->pid == getpid()) {
		o->free_handle(o->handle);
	}
	o->handle = NULL;
	if (o->lock.name != NULL) {
		zend_string_release(o->lock.name);
		o->lock.name = NULL;
	}
	zval_ptr_dtor(&o->store);
	ZVAL_UNDEF(&o->store);
	zval_ptr_dtor(&o->callable);
	ZVAL_UNDEF(&o->callable);
	o->fcc = empty_fcall_info_cache;
	zend_object_std_dtor(obj);
}

/* The store and the callable (a ViewCounter's loader, often a closure that
 * holds the counter itself: a cycle the collector must see). */
static HashTable *php_mcds_get_gc(zend_object *obj, zval **table, int *n)
{
	php_mcds_object *o = php_mcds_from_obj(obj);
	zend_get_gc_buffer *buf = zend_get_gc_buffer_create();
	zend_get_gc_buffer_add_zval(buf, &o->store);
	zend_get_gc_buffer_add_zval(buf, &o->callable);
	zend_get_gc_buffer_use(buf, table, n);
	return obj->properties;
}

void *php_mcds_this_handle(zval *this_zv)
{
	php_mcds_object *o = Z_MCDS_P(this_zv);
	if (UNEXPECTED(o->handle == NULL)) {
		zend_throw_error(NULL, "%s object is not constructed", ZSTR_VAL(Z_OBJCE_P(this_zv)->name));
		return NULL;
	}
	if (UNEXPECTED(o->pid != getpid())) {
		zend_throw_error(NULL, "%s object was made in process %ld, before a fork (pcntl_fork): its "
			"connections are that process's; make the store again in this process (a persistentId "
			"store is made again by each process)", ZSTR_VAL(Z_OBJCE_P(this_zv)->name), (long)o->pid);
		return NULL;
	}
	return o->handle;
}

const mcds_store *php_mcds_store_handle(zval *store_zv)
{
	if (store_zv == NULL || Z_TYPE_P(store_zv) != IS_OBJECT
		|| !instanceof_function(Z_OBJCE_P(store_zv), php_mcds_store_ce)) {
		zend_throw_error(zend_ce_type_error, "expected a Mcds\\Store");
		return NULL;
	}
	return php_mcds_this_handle(store_zv);
}

bool php_mcds_adopt(zval *obj_zv, void *handle, void (*free_handle)(void *), zval *store_zv)
{
	php_mcds_object *o = Z_MCDS_P(obj_zv);
	if (o->handle != NULL) {
		free_handle(handle);
		zend_throw_error(NULL, "%s object is already constructed", ZSTR_VAL(Z_OBJCE_P(obj_zv)->name));
		return false;
	}
	o->handle = handle;
	o->free_handle = free_handle;
	o->pid = getpid();
	if (store_zv != NULL) {
		ZVAL_COPY(&o->store, store_zv);
	}
	return true;
}

void php_mcds_return_derived(zval *rv, zval *this_zv, void *handle, void (*free_handle)(void *))
{
	object_init_ex(rv, Z_OBJCE_P(this_zv));
	/* A fresh object: adopting cannot fail. */
	php_mcds_adopt(rv, handle, free_handle, &Z_MCDS_P(this_zv)->store);
}

/* ---- errors -------------------------------------------------------------- */

zend_class_entry *php_mcds_exception_class(mcds_result code)
{
	switch (code) {
	case MCDS_CALLBACK_FAILED:
		return php_mcds_callback_failed_exception_ce;
	case MCDS_NULL_ARGUMENT:
	case MCDS_PANIC:
	case MCDS_INTERNAL:
		return internal_ce;
	case MCDS_INVALID_UTF8:
	case MCDS_INVALID_KEY:
		return invalid_key_ce;
	case MCDS_VALUE_TOO_LARGE:
		return value_too_large_ce;
	case MCDS_INVALID_ARGUMENT:
		return invalid_argument_ce;
	case MCDS_NON_NUMERIC:
		return non_numeric_ce;
	case MCDS_CORRUPT:
		return corrupt_ce;
	case MCDS_LOST:
		return lost_ce;
	case MCDS_IO:
		return io_ce;
	case MCDS_SERVER_DOWN:
		return server_down_ce;
	case MCDS_TIMEOUT:
		return timeout_ce;
	case MCDS_AMBIGUOUS:
		return ambiguous_ce;
	case MCDS_OUT_OF_MEMORY:
		return out_of_memory_ce;
	case MCDS_SERVER_ERROR:
		return server_error_ce;
	case MCDS_PROTOCOL:
		return protocol_ce;
	case MCDS_CONFLICT:
		return conflict_ce;
	case MCDS_UNSUPPORTED:
		return unsupported_ce;
	case MCDS_WAIT_TIMEOUT:
		return wait_timeout_ce;
	default:
		/* A code from a newer libmcds: its family, else the base class. */
		if (code >= 200 && code < 300) {
			return backend_ce;
		}
		return php_mcds_exception_ce;
	}
}

void php_mcds_throw(mcds_result code)
{
	/* First, before any other mcds call can overwrite it. */
	const char *message = mcds_last_error_message();
	zend_throw_exception(php_mcds_exception_class(code), message != NULL ? message : "", (zend_long)code);
}

/* ---- conversions --------------------------------------------------------- */

bool php_mcds_arg_u64(zend_long v, uint32_t arg, uint64_t *out)
{
	if (v < 0) {
		zend_argument_value_error(arg, "must be greater than or equal to 0");
		return false;
	}
	*out = (uint64_t)v;
	return true;
}

zend_result php_mcds_call(zval *fn, zend_fcall_info_cache *fcc, zval *params, uint32_t count, zval *rv)
{
	zend_fcall_info fci;
	fci.size = sizeof(fci);
	ZVAL_COPY_VALUE(&fci.function_name, fn);
	fci.object = NULL;
	fci.retval = rv;
	fci.params = params;
	fci.param_count = count;
	fci.named_params = NULL;
	return zend_call_function(&fci, fcc);
}

bool php_mcds_arg_u32(zend_long v, uint32_t arg, uint32_t *out)
{
	if (v < 0 || (uint64_t)v > UINT32_MAX) {
		zend_argument_value_error(arg, "must be between 0 and %" PRIu32, UINT32_MAX);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

bool php_mcds_arg_ttl(zend_long seconds, uint32_t arg, uint32_t *out_secs)
{
	if (seconds < 0 || (uint64_t)seconds > UINT32_MAX) {
		zend_argument_value_error(arg, "must be between 0 and %" PRIu32 " seconds", UINT32_MAX);
		return false;
	}
	*out_secs = (uint32_t)seconds;
	return true;
}

bool php_mcds_arg_ms(double seconds, uint32_t arg, uint32_t *out_ms)
{
	if (!zend_finite(seconds) || seconds < 0 || seconds * 1000.0 > (double)UINT32_MAX) {
		zend_argument_value_error(arg, "must be between 0 and %" PRIu32 " seconds", UINT32_MAX / 1000);
		return false;
	}
	*out_ms = (uint32_t)ceil(seconds * 1000.0);
	return true;
}

bool php_mcds_arg_whole_secs(double seconds, uint32_t arg, uint32_t *out_secs)
{
	/* 0 is refused here too, with the same ValueError as -1 and 1.5 (it
	 * reached libmcds and came back as InvalidArgumentException "0ns"). */
	if (!zend_finite(seconds) || seconds < 1 || seconds > (double)UINT32_MAX || seconds != floor(seconds)) {
		zend_argument_value_error(arg,
			"must be a whole number of seconds between 1 and %" PRIu32 " (libmcds leases are whole seconds)",
			UINT32_MAX);
		return false;
	}
	*out_secs = (uint32_t)seconds;
	return true;
}

bool php_mcds_members_from_array(HashTable *ht, uint32_t arg, php_mcds_members *out)
{
	uint32_t n = zend_hash_num_elements(ht);
	out->count = 0;
	out->data = safe_emalloc(n ? n : 1, sizeof(*out->data), 0);
	out->lens = safe_emalloc(n ? n : 1, sizeof(*out->lens), 0);
	out->held = safe_emalloc(n ? n : 1, sizeof(*out->held), 0);
	zval *v;
	ZEND_HASH_FOREACH_VAL(ht, v) {
		ZVAL_DEREF(v);
		zend_string *str;
		if (Z_TYPE_P(v) == IS_STRING) {
			str = zend_string_copy(Z_STR_P(v));
		} else {
			/* As a string parameter would take it: a copy converted in the
			 * caller's mode, the array left as it is. */
			zval tmp;
			zend_string *conv = NULL;
			ZVAL_COPY(&tmp, v);
			if (!zend_parse_arg_str(&tmp, &conv, false, arg)) {
				zval_ptr_dtor(&tmp);
				if (!EG(exception)) {
					zend_argument_type_error(arg, "must contain only strings, %s given", zend_zval_type_name(v));
				}
				php_mcds_members_free(out);
				return false;
			}
			str = zend_string_copy(conv);
			zval_ptr_dtor(&tmp);
		}
		out->held[out->count] = str;
		out->data[out->count] = (const uint8_t *)ZSTR_VAL(str);
		out->lens[out->count] = ZSTR_LEN(str);
		out->count++;
	} ZEND_HASH_FOREACH_END();
	return true;
}

void php_mcds_members_free(php_mcds_members *m)
{
	for (uintptr_t i = 0; i < m->count; i++) {
		zend_string_release(m->held[i]);
	}
	efree(m->data);
	efree(m->lens);
	efree(m->held);
	m->data = NULL;
	m->lens = NULL;
	m->held = NULL;
	m->count = 0;
}

bool php_mcds_check_variadic(zval *args, uint32_t argc, zend_class_entry *ce, uint32_t first_arg)
{
	for (uint32_t i = 0; i < argc; i++) {
		if (Z_TYPE(args[i]) != IS_OBJECT || !instanceof_function(Z_OBJCE(args[i]), ce)) {
			zend_argument_type_error(first_arg + i, "must be of type %s, %s given", ZSTR_VAL(ce->name),
				zend_zval_type_name(&args[i]));
			return false;
		}
	}
	return true;
}

bool php_mcds_u64_result(uint64_t v, zval *rv)
{
	if (v > (uint64_t)ZEND_LONG_MAX) {
		zend_throw_exception_ex(php_mcds_exception_ce, 0,
			"the value %" PRIu64 " does not fit a PHP int (at most " ZEND_LONG_FMT ")", v, ZEND_LONG_MAX);
		return false;
	}
	ZVAL_LONG(rv, (zend_long)v);
	return true;
}

void php_mcds_u64_int_or_string(uint64_t v, zval *rv)
{
	if (v > (uint64_t)ZEND_LONG_MAX) {
		ZVAL_STR(rv, zend_strpprintf(0, "%" PRIu64, v));
	} else {
		ZVAL_LONG(rv, (zend_long)v);
	}
}

bool php_mcds_bytes_list_to_array(mcds_bytes_list *list, zval *rv)
{
	uintptr_t len = 0;
	if (!php_mcds_ok(mcds_bytes_list_len(list, &len))) {
		mcds_bytes_list_free(list);
		return false;
	}
	array_init_size(rv, (uint32_t)MIN(len, UINT32_MAX));
	for (uintptr_t i = 0; i < len; i++) {
		const uint8_t *data = NULL;
		uintptr_t n = 0;
		if (!php_mcds_ok(mcds_bytes_list_get(list, i, &data, &n))) {
			mcds_bytes_list_free(list);
			zval_ptr_dtor(rv);
			ZVAL_NULL(rv);
			return false;
		}
		add_next_index_stringl(rv, (const char *)data, n);
	}
	mcds_bytes_list_free(list);
	return true;
}

bool php_mcds_optional_bytes(mcds_bytes_list *list, const char *call, zval *rv)
{
	if (list == NULL) {
		ZVAL_NULL(rv);
		return true;
	}
	zval items;
	if (!php_mcds_bytes_list_to_array(list, &items)) {
		return false;
	}
	zval *first = zend_hash_index_find(Z_ARRVAL(items), 0);
	if (first == NULL) { /* libmcds promises one item; an empty list is a bug */
		zval_ptr_dtor(&items);
		zend_throw_exception_ex(php_mcds_exception_class(MCDS_INTERNAL), MCDS_INTERNAL,
			"%s returned an empty list", call);
		return false;
	}
	ZVAL_COPY(rv, first);
	zval_ptr_dtor(&items);
	return true;
}

double php_mcds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- functions and small methods ----------------------------------------- */

ZEND_FUNCTION(Mcds_version)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_STRING(mcds_version());
}

ZEND_METHOD(Mcds_Exception, getResultName)
{
	ZEND_PARSE_PARAMETERS_NONE();
	zval rv;
	zval *code = zend_read_property(php_mcds_exception_ce, Z_OBJ_P(ZEND_THIS), "code",
		sizeof("code") - 1, 1, &rv);
	zend_long c = Z_TYPE_P(code) == IS_LONG ? Z_LVAL_P(code) : 0;
	if (c == 0) {
		RETURN_STRING("MCDS_OK");
	}
	RETURN_STRING(mcds_result_name(c < 0 || c > UINT32_MAX ? MCDS_OTHER : (mcds_result)c));
}

ZEND_METHOD(Mcds_Decision, __construct)
{
	ZEND_PARSE_PARAMETERS_NONE();
}

/* ---- module -------------------------------------------------------------- */

/* The defaults of Mcds\Store::fromConfig (store.c checks and reads them
 * when it is called: a mistake is an exception naming the setting, not a
 * startup warning that leaves the default in place). PHP_INI_ALL, as
 * php-memcached's settings: php.ini, a php-fpm pool's php_value or
 * php_admin_value, .user.ini, ini_set(). */
static ZEND_INI_MH(php_mcds_ini_any)
{
	/* Any value: checked when read. (A handler all the same: without one,
	 * ini_restore() leaves the entry as ini_set() made it.) */
	return SUCCESS;
}

PHP_INI_BEGIN()
	PHP_INI_ENTRY(PHP_MCDS_INI_SERVERS, "", PHP_INI_ALL, php_mcds_ini_any)
	PHP_INI_ENTRY(PHP_MCDS_INI_CONNECT_TIMEOUT, "", PHP_INI_ALL, php_mcds_ini_any)
	PHP_INI_ENTRY(PHP_MCDS_INI_IO_TIMEOUT, "", PHP_INI_ALL, php_mcds_ini_any)
	PHP_INI_ENTRY(PHP_MCDS_INI_PREFIX, "", PHP_INI_ALL, php_mcds_ini_any)
PHP_INI_END()

static PHP_MINIT_FUNCTION(mcds)
{
	REGISTER_INI_ENTRIES();
	memcpy(&php_mcds_handlers, zend_get_std_object_handlers(), sizeof(zend_object_handlers));
	php_mcds_handlers.offset = XtOffsetOf(php_mcds_object, std);
	php_mcds_handlers.free_obj = php_mcds_free_obj;
	php_mcds_handlers.clone_obj = NULL;
	php_mcds_handlers.get_gc = php_mcds_get_gc;

	/* The handle classes (mcds_classes.h): each object a php_mcds_object. */
#define PHP_MCDS_REGISTER(class, stem, file)                        \
	php_mcds_##stem##_ce = register_class_Mcds_##class();          \
	php_mcds_##stem##_ce->create_object = php_mcds_create_object;
	MCDS_HANDLE_CLASSES(PHP_MCDS_REGISTER)
#undef PHP_MCDS_REGISTER
	php_mcds_decision_ce = register_class_Mcds_Decision();
	php_mcds_cursor_ce = register_class_Mcds_Cursor();

	php_mcds_exception_ce = register_class_Mcds_Exception(spl_ce_RuntimeException);
	internal_ce = register_class_Mcds_InternalException(php_mcds_exception_ce);
	php_mcds_callback_failed_exception_ce = register_class_Mcds_CallbackFailedException(php_mcds_exception_ce);
	invalid_key_ce = register_class_Mcds_InvalidKeyException(php_mcds_exception_ce);
	value_too_large_ce = register_class_Mcds_ValueTooLargeException(php_mcds_exception_ce);
	invalid_argument_ce = register_class_Mcds_InvalidArgumentException(php_mcds_exception_ce);
	non_numeric_ce = register_class_Mcds_NonNumericException(php_mcds_exception_ce);
	corrupt_ce = register_class_Mcds_CorruptException(php_mcds_exception_ce);
	lost_ce = register_class_Mcds_LostException(corrupt_ce);
	backend_ce = register_class_Mcds_BackendException(php_mcds_exception_ce);
	io_ce = register_class_Mcds_IoException(backend_ce);
	server_down_ce = register_class_Mcds_ServerDownException(backend_ce);
	timeout_ce = register_class_Mcds_TimeoutException(backend_ce);
	ambiguous_ce = register_class_Mcds_AmbiguousException(backend_ce);
	out_of_memory_ce = register_class_Mcds_OutOfMemoryException(backend_ce);
	server_error_ce = register_class_Mcds_ServerErrorException(backend_ce);
	protocol_ce = register_class_Mcds_ProtocolException(backend_ce);
	conflict_ce = register_class_Mcds_ConflictException(php_mcds_exception_ce);
	unsupported_ce = register_class_Mcds_UnsupportedException(php_mcds_exception_ce);
	wait_timeout_ce = register_class_Mcds_WaitTimeoutException(php_mcds_exception_ce);
	php_mcds_lock_lost_exception_ce = register_class_Mcds_LockLostException(php_mcds_exception_ce);
	return SUCCESS;
}

/* Persistent stores are made on first use in each process (never here
 * or in MINIT, which php-fpm runs in its master before it forks the
 * workers), and freed here as the process ends. */
static PHP_MSHUTDOWN_FUNCTION(mcds)
{
	php_mcds_persistent_stores_shutdown();
	UNREGISTER_INI_ENTRIES();
	return SUCCESS;
}

static PHP_MINFO_FUNCTION(mcds)
{
	php_info_print_table_start();
	php_info_print_table_row(2, "mcds support", "enabled");
	php_info_print_table_row(2, "extension version", PHP_MCDS_VERSION);
	php_info_print_table_row(2, "libmcds version", mcds_version());
#ifdef MCDS_STATIC
	php_info_print_table_row(2, "libmcds linked", "statically (libmcds.a)");
#else
	php_info_print_table_row(2, "libmcds linked", "dynamically (libmcds.so)");
#endif
	php_info_print_table_end();
	DISPLAY_INI_ENTRIES();
}

zend_module_entry mcds_module_entry = {
	STANDARD_MODULE_HEADER,
	PHP_MCDS_EXTNAME,
	ext_functions,
	PHP_MINIT(mcds),
	PHP_MSHUTDOWN(mcds),
	NULL, /* RINIT */
	NULL, /* RSHUTDOWN */
	PHP_MINFO(mcds),
	PHP_MCDS_VERSION,
	STANDARD_MODULE_PROPERTIES
};

#ifdef COMPILE_DL_MCDS
#ifdef ZTS
ZEND_TSRMLS_CACHE_DEFINE()
#endif
ZEND_GET_MODULE(mcds)
#endif
