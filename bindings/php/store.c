/* Mcds\Store: memcached or the embedded store (with their options, through
 * mcds_store_builder_*), the store php.ini configures (fromConfig),
 * persistent stores, key prefixes, and the factories of every structure
 * (each forwards to the structure's own constructor). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "php_mcds.h"
#include "php_ini.h"
#include "zend_exceptions.h"
#include "zend_smart_str.h"

static void store_free(void *h) { mcds_store_free(h); }
/* A persistent store's handle: the process's table owns it. */
static void store_keep(void *h) { (void)h; }

/* ---- persistent stores ----------------------------------------------------
 *
 * A $persistentId keeps the mcds_store in a table of this process, from the
 * id to the store and the factory and arguments that made it, until the
 * process ends (MSHUTDOWN): under php-fpm each worker makes its stores on
 * first use (the table is made then too: never in MINIT, which runs in the
 * master before the fork) and keeps their connections for every later
 * request. The Store objects of a request borrow the handle (store_keep);
 * the structures made from them hold their own reference to the store (as
 * include/mcds.h says of mcds_store_free). mcds_store is thread-safe; the
 * table itself is guarded by a mutex under ZTS. */

typedef struct {
	mcds_store *store;
	const char *factory;  /* "Mcds\\Store::memcached()", ... (static) */
	zend_string *config;  /* the factory's arguments, as config_* makes them */
} persistent_store;

static HashTable *persistent_stores; /* NULL until the first one */
/* The process that made the table: a child of pcntl_fork (or a php-fpm
 * worker forked from a master that preloaded a store, opcache.preload)
 * must not share its parent's connections. It drops the table without
 * freeing anything (the stores are the parent's) and makes its own. */
static pid_t persistent_pid;

/* The table of this process (under the lock): NULL if it has none. */
static HashTable *persistent_table(void)
{
	if (persistent_stores != NULL && persistent_pid != getpid()) {
		persistent_stores = NULL; /* the parent's: left as it is */
	}
	return persistent_stores;
}
#ifdef ZTS
#include <pthread.h>
static pthread_mutex_t persistent_mutex = PTHREAD_MUTEX_INITIALIZER;
#define PERSISTENT_LOCK() pthread_mutex_lock(&persistent_mutex)
#define PERSISTENT_UNLOCK() pthread_mutex_unlock(&persistent_mutex)
#else
#define PERSISTENT_LOCK()
#define PERSISTENT_UNLOCK()
#endif

static void persistent_store_dtor(zval *zv)
{
	persistent_store *p = Z_PTR_P(zv);
	mcds_store_free(p->store);
	zend_string_release(p->config);
	pefree(p, 1);
}

void php_mcds_persistent_stores_shutdown(void)
{
	if (persistent_table() != NULL) {
		zend_hash_destroy(persistent_stores);
		pefree(persistent_stores, 1);
		persistent_stores = NULL;
	}
}

#define MAX_PERSISTENT_ID 255

/* A $persistentId: 1 to 255 bytes (no NUL: Z_PARAM_PATH_STR_OR_NULL). */
static bool persistent_id_ok(zend_string *id, uint32_t arg)
{
	if (id != NULL && (ZSTR_LEN(id) == 0 || ZSTR_LEN(id) > MAX_PERSISTENT_ID)) {
		zend_argument_value_error(arg, "must be a persistent id of 1 to %d bytes, or null", MAX_PERSISTENT_ID);
		return false;
	}
	return true;
}

static void persistent_mismatch(zend_string *id, const persistent_store *p, const char *factory)
{
	/* The arguments themselves are not repeated: a URL may hold credentials. */
	zend_throw_exception_ex(php_mcds_exception_class(MCDS_INVALID_ARGUMENT), MCDS_INVALID_ARGUMENT,
		"%s: the persistent id \"%s\" is already a store of this process made by %s with other "
		"servers or options; a persistent id is reused only with the same factory and the same arguments "
		"(give each configuration an id of its own)", factory, ZSTR_VAL(id), p->factory);
}

/* The store `id` names in this process: NULL if none (no exception), or
 * NULL with an InvalidArgumentException if it was made otherwise. */
static mcds_store *persistent_find(zend_string *id, const char *factory, zend_string *config)
{
	mcds_store *found = NULL;
	PERSISTENT_LOCK();
	persistent_store *p = persistent_table() != NULL ? zend_hash_find_ptr(persistent_stores, id) : NULL;
	if (p != NULL) {
		if (zend_string_equals(p->config, config)) {
			found = p->store;
		} else {
			persistent_mismatch(id, p, factory);
		}
	}
	PERSISTENT_UNLOCK();
	return found;
}

/* Keep `store` (the table owns it from now on) under `id`; returns the
 * store to use: `store`, or the one another thread kept first with the
 * same arguments (`store` freed), or NULL with the mismatch thrown. */
static mcds_store *persistent_add(zend_string *id, const char *factory, zend_string *config, mcds_store *store)
{
	PERSISTENT_LOCK();
	if (persistent_table() == NULL) {
		persistent_stores = pemalloc(sizeof(HashTable), 1);
		persistent_pid = getpid();
		zend_hash_init(persistent_stores, 8, NULL, persistent_store_dtor, 1);
	}
	persistent_store *p = zend_hash_find_ptr(persistent_stores, id);
	mcds_store *use = NULL;
	if (p != NULL) {
		if (zend_string_equals(p->config, config)) {
			use = p->store;
		} else {
			persistent_mismatch(id, p, factory);
		}
		mcds_store_free(store);
	} else {
		p = pemalloc(sizeof(*p), 1);
		p->store = store;
		p->factory = factory;
		p->config = zend_string_dup(config, 1);
		zend_hash_str_add_new_ptr(persistent_stores, ZSTR_VAL(id), ZSTR_LEN(id), p);
		use = store;
	}
	PERSISTENT_UNLOCK();
	return use;
}

/* A new Mcds\Store in return_value on `store`: owned by the object, or with
 * a persistent id kept in the table and borrowed. */
static void store_return(zval *return_value, mcds_store *store, zend_string *persistent_id,
	const char *factory, zend_string *config)
{
	if (persistent_id != NULL) {
		store = persistent_add(persistent_id, factory, config, store);
		if (store == NULL) {
			RETURN_THROWS();
		}
	}
	object_init_ex(return_value, php_mcds_store_ce);
	php_mcds_adopt(return_value, store, persistent_id != NULL ? store_keep : store_free, NULL);
	Z_MCDS_P(return_value)->persistent = persistent_id != NULL;
}

/* `r` must be evaluated before `store` is read: the caller makes the call
 * first (C leaves the order of arguments' evaluation open). */
static void store_result(zval *return_value, mcds_result r, mcds_store *store)
{
	if (!php_mcds_ok(r)) {
		return;
	}
	store_return(return_value, store, NULL, NULL, NULL);
}

/* With a persistent id: the store it already names (true, return_value
 * set, or an exception thrown when it was made otherwise); false: none
 * yet, make it. */
static bool store_reuse(zval *return_value, zend_string *persistent_id, const char *factory, zend_string *config)
{
	if (persistent_id == NULL) {
		return false;
	}
	mcds_store *store = persistent_find(persistent_id, factory, config);
	if (store == NULL) {
		return EG(exception) != NULL;
	}
	object_init_ex(return_value, php_mcds_store_ce);
	php_mcds_adopt(return_value, store, store_keep, NULL);
	Z_MCDS_P(return_value)->persistent = true;
	return true;
}

/* The arguments of a factory, as one string to compare (never shown). */
static zend_string *config_of(const char *kind, const char *text, size_t text_len, const zend_long *nums, size_t n)
{
	smart_str s = {0};
	smart_str_appends(&s, kind);
	smart_str_appendc(&s, '\n');
	smart_str_appendl(&s, text, text_len);
	for (size_t i = 0; i < n; i++) {
		smart_str_appendc(&s, '\n');
		smart_str_append_long(&s, nums[i]);
	}
	return smart_str_extract(&s);
}

ZEND_METHOD(Mcds_Store, __construct)
{
	ZEND_PARSE_PARAMETERS_NONE();
}

/* A builder setter's result: a range libmcds refuses is a ValueError for
 * argument `arg`, with libmcds's message; any other error is thrown as
 * usual. */
static bool option_set(mcds_result r, uint32_t arg)
{
	if (r == MCDS_INVALID_ARGUMENT) {
		zend_argument_value_error(arg, "was refused by libmcds: %s", mcds_last_error_message());
		return false;
	}
	return php_mcds_ok(r);
}

/* The longest timeout libmcds accepts: an hour. */
#define MAX_TIMEOUT_SECS 3600

/* A timeout in seconds (0 < t <= an hour) as whole milliseconds, rounded up. */
static bool timeout_ms(double seconds, uint32_t arg, uint32_t *ms)
{
	if (!zend_finite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_SECS) {
		zend_argument_value_error(arg, "must be greater than 0 and at most %d seconds", MAX_TIMEOUT_SECS);
		return false;
	}
	*ms = (uint32_t)ceil(seconds * 1000.0);
	return true;
}

static bool byte_option(const mcds_store_builder *b, zend_long v, uint32_t arg,
	mcds_result (*set)(const mcds_store_builder *, uint64_t))
{
	uint64_t bytes;
	return php_mcds_arg_u64(v, arg, &bytes) && option_set(set(b, bytes), arg);
}

ZEND_METHOD(Mcds_Store, memcached)
{
	char *servers;
	size_t servers_len;
	double connect = 0, io = 0;
	bool connect_null = true, io_null = true, item_null = true;
	zend_long item = 0;
	zend_string *persistent_id = NULL;
	ZEND_PARSE_PARAMETERS_START(1, 5)
		Z_PARAM_PATH(servers, servers_len)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(connect, connect_null)
		Z_PARAM_DOUBLE_OR_NULL(io, io_null)
		Z_PARAM_LONG_OR_NULL(item, item_null)
		Z_PARAM_PATH_STR_OR_NULL(persistent_id)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t connect_ms = 0, io_ms = 0;
	uint64_t unused;
	if ((!connect_null && !timeout_ms(connect, 2, &connect_ms)) || (!io_null && !timeout_ms(io, 3, &io_ms))
		|| !persistent_id_ok(persistent_id, 5) || (!item_null && !php_mcds_arg_u64(item, 4, &unused))) {
		RETURN_THROWS();
	}
	static const char factory[] = "Mcds\\Store::memcached()";
	zend_long nums[] = {connect_null ? -1 : (zend_long)connect_ms, io_null ? -1 : (zend_long)io_ms, item_null ? -1 : item};
	zend_string *config = config_of("memcached", servers, servers_len, nums, 3);
	if (store_reuse(return_value, persistent_id, factory, config)) {
		zend_string_release(config);
		return;
	}
	mcds_store *store = NULL;
	mcds_result r = MCDS_OK;
	bool ok = true;
	if (connect_null && io_null && item_null) {
		r = mcds_store_new_memcached(servers, &store);
	} else {
		mcds_store_builder *b = NULL;
		r = mcds_store_builder_new(&b);
		if (r == MCDS_OK) {
			ok = (connect_null || option_set(mcds_store_builder_set_connect_timeout_ms(b, connect_ms), 2))
				&& (io_null || option_set(mcds_store_builder_set_io_timeout_ms(b, io_ms), 3))
				&& (item_null || byte_option(b, item, 4, mcds_store_builder_set_item_size_limit));
			r = ok ? mcds_store_builder_build_memcached(b, servers, &store) : MCDS_OK;
			mcds_store_builder_free(b);
		}
	}
	if (ok && php_mcds_ok(r)) {
		store_return(return_value, store, persistent_id, factory, config);
	}
	zend_string_release(config);
}

ZEND_METHOD(Mcds_Store, memory)
{
	zend_long memory = 0, item = 0;
	bool evict = true;
	bool memory_null = true, evict_null = true, item_null = true;
	zend_string *persistent_id = NULL;
	ZEND_PARSE_PARAMETERS_START(0, 4)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG_OR_NULL(memory, memory_null)
		Z_PARAM_BOOL_OR_NULL(evict, evict_null)
		Z_PARAM_LONG_OR_NULL(item, item_null)
		Z_PARAM_PATH_STR_OR_NULL(persistent_id)
	ZEND_PARSE_PARAMETERS_END();
	uint64_t unused;
	if (!persistent_id_ok(persistent_id, 4) || (!memory_null && !php_mcds_arg_u64(memory, 1, &unused))
		|| (!item_null && !php_mcds_arg_u64(item, 3, &unused))) {
		RETURN_THROWS();
	}
	static const char factory[] = "Mcds\\Store::memory()";
	zend_long nums[] = {memory_null ? -1 : memory, evict_null ? -1 : evict, item_null ? -1 : item};
	zend_string *config = config_of("memory", "", 0, nums, 3);
	if (store_reuse(return_value, persistent_id, factory, config)) {
		zend_string_release(config);
		return;
	}
	mcds_store *store = NULL;
	mcds_result r = MCDS_OK;
	bool ok = true;
	if (memory_null && evict_null && item_null) {
		r = mcds_store_new_memory(&store);
	} else {
		mcds_store_builder *b = NULL;
		r = mcds_store_builder_new(&b);
		if (r == MCDS_OK) {
			ok = (memory_null || byte_option(b, memory, 1, mcds_store_builder_set_memory_limit))
				&& (evict_null || php_mcds_ok(mcds_store_builder_set_evict(b, evict)))
				&& (item_null || byte_option(b, item, 3, mcds_store_builder_set_item_size_limit));
			r = ok ? mcds_store_builder_build_memory(b, &store) : MCDS_OK;
			mcds_store_builder_free(b);
		}
	}
	if (ok && php_mcds_ok(r)) {
		store_return(return_value, store, persistent_id, factory, config);
	}
	zend_string_release(config);
}

/* A store from a URL (fromUrl, fromConfig); `what`, when not NULL, goes in
 * front of libmcds's message (the URL itself is never repeated). */
static void url_store(zval *return_value, const char *url, size_t url_len, zend_string *persistent_id,
	const char *factory, const char *what)
{
	zend_string *config = config_of("url", url, url_len, NULL, 0);
	if (store_reuse(return_value, persistent_id, factory, config)) {
		zend_string_release(config);
		return;
	}
	mcds_store *store = NULL;
	mcds_result r = mcds_store_new_url(url, &store);
	if (r == MCDS_OK) {
		store_return(return_value, store, persistent_id, factory, config);
	} else if (what != NULL) {
		const char *message = mcds_last_error_message();
		zend_throw_exception_ex(php_mcds_exception_class(r), (zend_long)r, "%s: %s", what,
			message != NULL ? message : "");
	} else {
		php_mcds_throw(r);
	}
	zend_string_release(config);
}

ZEND_METHOD(Mcds_Store, fromUrl)
{
	char *url;
	size_t url_len;
	zend_string *persistent_id = NULL;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_PATH(url, url_len)
		Z_PARAM_OPTIONAL
		Z_PARAM_PATH_STR_OR_NULL(persistent_id)
	ZEND_PARSE_PARAMETERS_END();
	if (!persistent_id_ok(persistent_id, 2)) {
		RETURN_THROWS();
	}
	url_store(return_value, url, url_len, persistent_id, "Mcds\\Store::fromUrl()", NULL);
}

/* An InvalidArgumentException about the php.ini settings. */
static void config_error(const char *format, ...) ZEND_ATTRIBUTE_FORMAT(printf, 1, 2);
static void config_error(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	zend_string *message = zend_vstrpprintf(0, format, args);
	va_end(args);
	zend_throw_exception(php_mcds_exception_class(MCDS_INVALID_ARGUMENT), ZSTR_VAL(message), MCDS_INVALID_ARGUMENT);
	zend_string_release(message);
}

/* `v` (NULL: "") without the spaces around it; its length in *len. */
static const char *trimmed(const char *v, size_t *len)
{
	if (v == NULL) {
		v = "";
	}
	size_t n = strlen(v);
	while (n > 0 && isspace((unsigned char)*v)) {
		v++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)v[n - 1])) {
		n--;
	}
	*len = n;
	return v;
}

/* An ini setting, without the spaces around it ("" when unset). */
static const char *ini_trimmed(const char *name, size_t *len)
{
	return trimmed(zend_ini_string_ex((char *)name, strlen(name), 0, NULL), len);
}

/* mcds.connect_timeout / mcds.io_timeout as a URL option (none when unset). */
static bool config_timeout(smart_str *url, char *sep, const char *name, const char *option)
{
	size_t len;
	const char *v = ini_trimmed(name, &len);
	if (len == 0) {
		return true;
	}
	char buf[64];
	char *end = NULL;
	double secs = -1;
	if (len < sizeof(buf)) {
		memcpy(buf, v, len);
		buf[len] = '\0';
		secs = zend_strtod(buf, (const char **)&end);
	}
	if (end == NULL || *end != '\0' || !zend_finite(secs) || secs <= 0 || secs > MAX_TIMEOUT_SECS) {
		config_error("Mcds\\Store::fromConfig(): the ini setting %s = \"%.*s\" must be a number of seconds greater than 0 and at most %d "
			"(or empty for the default, 1.0)", name, (int)MIN(len, 64), v, MAX_TIMEOUT_SECS);
		return false;
	}
	smart_str_appendc(url, *sep);
	*sep = '&';
	smart_str_appends(url, option);
	smart_str_appendc(url, '=');
	smart_str_append_unsigned(url, (zend_ulong)ceil(secs * 1000.0));
	return true;
}

ZEND_METHOD(Mcds_Store, fromConfig)
{
	zend_string *persistent_id = NULL;
	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_PATH_STR_OR_NULL(persistent_id)
	ZEND_PARSE_PARAMETERS_END();
	if (!persistent_id_ok(persistent_id, 1)) {
		RETURN_THROWS();
	}
	size_t servers_len;
	const char *servers = ini_trimmed(PHP_MCDS_INI_SERVERS, &servers_len);
	const char *what = "Mcds\\Store::fromConfig(): the ini settings mcds.servers (and mcds.*)";
	if (servers_len == 0) {
		/* The process's environment (php-cli, php-cgi; php-fpm clears its
		 * workers' by default), as the mcds command reads it. */
		servers = trimmed(getenv("MCDS_SERVERS"), &servers_len);
		what = "Mcds\\Store::fromConfig(): MCDS_SERVERS in the environment (and the ini settings mcds.*)";
	}
	if (servers_len == 0) {
		config_error("Mcds\\Store::fromConfig(): no store is configured: the ini setting mcds.servers is empty and so "
			"is MCDS_SERVERS in the environment (php-fpm clears its workers' environment: clear_env); "
			"set mcds.servers to host:port[,host:port...] or a store URL (memory:// for the embedded store)");
		RETURN_THROWS();
	}
	smart_str url = {0};
	smart_str_appendl(&url, servers, servers_len);
	char sep = memchr(servers, '?', servers_len) != NULL ? '&' : '?';
	if (!config_timeout(&url, &sep, PHP_MCDS_INI_CONNECT_TIMEOUT, "connect_timeout_ms")
		|| !config_timeout(&url, &sep, PHP_MCDS_INI_IO_TIMEOUT, "io_timeout_ms")) {
		smart_str_free(&url);
		RETURN_THROWS();
	}
	size_t prefix_len;
	const char *prefix = ini_trimmed(PHP_MCDS_INI_PREFIX, &prefix_len);
	if (prefix_len > 0) {
		/* Percent-encoded: libmcds decodes option values. */
		static const char hex[] = "0123456789ABCDEF";
		smart_str_appendc(&url, sep);
		smart_str_appends(&url, "prefix=");
		for (size_t i = 0; i < prefix_len; i++) {
			unsigned char c = (unsigned char)prefix[i];
			if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/' || c == ':') {
				smart_str_appendc(&url, (char)c);
			} else {
				smart_str_appendc(&url, '%');
				smart_str_appendc(&url, hex[c >> 4]);
				smart_str_appendc(&url, hex[c & 15]);
			}
		}
	}
	smart_str_0(&url);
	url_store(return_value, ZSTR_VAL(url.s), ZSTR_LEN(url.s), persistent_id, "Mcds\\Store::fromConfig()", what);
	smart_str_free(&url);
}

ZEND_METHOD(Mcds_Store, isPersistent)
{
	ZEND_PARSE_PARAMETERS_NONE();
	MCDS_GET_THIS(mcds_store, store);
	(void)store;
	RETURN_BOOL(Z_MCDS_P(ZEND_THIS)->persistent);
}

ZEND_METHOD(Mcds_Store, withPrefix)
{
	char *prefix;
	size_t prefix_len;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH(prefix, prefix_len)
	ZEND_PARSE_PARAMETERS_END();
	MCDS_GET_THIS(mcds_store, base);
	mcds_store *store = NULL;
	mcds_result r = mcds_store_with_prefix(base, prefix, &store);
	store_result(return_value, r, store);
	if (r == MCDS_OK) {
		/* A handle of its own, on the persistent store's connections. */
		Z_MCDS_P(return_value)->persistent = Z_MCDS_P(ZEND_THIS)->persistent;
	}
}

/* Store::update: the PHP callable of one call, called back by libmcds as an
 * mcds_updater on this thread, once per attempt (a lost CAS race calls it
 * again). As with the view counter's loader, nothing may unwind or longjmp
 * over the libmcds frames: an exception stays pending in EG(exception) and
 * the callback fails (nothing is written); a fatal error's bailout is
 * caught here and resumed after libmcds returned. */
typedef struct {
	zval *fn;                    /* the PHP callable */
	zend_fcall_info_cache fcc;   /* as resolved when it was passed */
	bool bailed_out;
} updater_ctx;

static mcds_result call_updater(void *ctx, const uint8_t *current, size_t current_len, bool exists, mcds_update *out)
{
	updater_ctx *c = ctx;
	volatile mcds_result code = MCDS_CALLBACK_FAILED;
	zval rv, arg;
	ZVAL_UNDEF(&rv);
	if (exists) {
		ZVAL_STRINGL(&arg, (const char *)current, current_len);
	} else {
		ZVAL_NULL(&arg);
	}
	zend_try {
		if (php_mcds_call(c->fn, &c->fcc, &arg, 1, &rv) == SUCCESS && EG(exception) == NULL) {
			if (Z_TYPE(rv) == IS_NULL) {
				code = MCDS_OK; /* leave the item as it is */
			} else if (Z_TYPE(rv) == IS_STRING) {
				code = mcds_update_set(out, (const uint8_t *)Z_STRVAL(rv), Z_STRLEN(rv));
			} else {
				zend_type_error("the function passed to Mcds\\Store::update() must return a string (the new value) "
					"or null (leave the item as it is), %s returned", zend_zval_type_name(&rv));
			}
		}
	} zend_catch {
		c->bailed_out = true;
	} zend_end_try();
	if (!c->bailed_out) {
		zval_ptr_dtor(&rv);
	}
	zval_ptr_dtor(&arg);
	return code;
}

ZEND_METHOD(Mcds_Store, update)
{
	char *key;
	size_t key_len;
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	zend_long seconds = 0, max_attempts = 0;
	ZEND_PARSE_PARAMETERS_START(2, 4)
		Z_PARAM_PATH(key, key_len)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(seconds)
		Z_PARAM_LONG(max_attempts)
	ZEND_PARSE_PARAMETERS_END();
	uint32_t ttl, attempts;
	if (!php_mcds_arg_ttl(seconds, 3, &ttl) || !php_mcds_arg_u32(max_attempts, 4, &attempts)) {
		RETURN_THROWS();
	}
	MCDS_GET_THIS(mcds_store, store);
	zval fn;
	/* Kept alive through the call, whatever the function does. */
	ZVAL_COPY(&fn, &fci.function_name);
	updater_ctx ctx = {.fn = &fn, .fcc = fcc, .bailed_out = false};
	bool written = false;
	mcds_result r = mcds_store_update(store, key, ttl, attempts, call_updater, &ctx, &written);
	if (ctx.bailed_out) {
		zend_bailout(); /* the function's fatal error, resumed */
	}
	zval_ptr_dtor(&fn);
	if (r == MCDS_OK) {
		RETURN_BOOL(written);
	}
	if (EG(exception) == NULL) {
		php_mcds_throw(r);
	}
	RETURN_THROWS();
}
