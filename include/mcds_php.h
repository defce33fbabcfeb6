/* libmcds for PHP's FFI::cdef, which takes it as it is: include/mcds.h without
   the preprocessor, its #define constants as enums ($ffi->MCDS_OK). Generated
   from include/mcds.h by ffi/tests/header.rs; do not edit. */




/*
 An activity bitmap: one bit per time unit (SETBIT, BITCOUNT).
 */
typedef struct mcds_bitmap mcds_bitmap;

/*
 A Bloom filter.
 */
typedef struct mcds_bloom mcds_bloom;

/*
 A list of byte strings returned by mcds; read it with
 `mcds_bytes_list_len`/`mcds_bytes_list_get`, free it with
 `mcds_bytes_list_free`.
 */
typedef struct mcds_bytes_list mcds_bytes_list;

/*
 An exact shared counter.
 */
typedef struct mcds_counter mcds_counter;

/*
 Events returned by `mcds_log_fetch`; read with `mcds_event_list_len` and
 `mcds_event_list_get`, free with `mcds_event_list_free`.
 */
typedef struct mcds_event_list mcds_event_list;

/*
 A HyperLogLog: distinct counting in 12 KiB (PFADD, PFCOUNT, PFMERGE).
 */
typedef struct mcds_hll mcds_hll;

/*
 A rate limiter: at most `limit` requests per window.
 */
typedef struct mcds_limiter mcds_limiter;

/*
 A distributed lock; the handle holds at most one lease at a time.
 */
typedef struct mcds_lock mcds_lock;

/*
 An event log (a ring of time-chunk keys).
 */
typedef struct mcds_log mcds_log;

/*
 A set of byte strings.
 */
typedef struct mcds_set mcds_set;

/*
 A store: the embedded in-process store or real memcached.
 */
typedef struct mcds_store mcds_store;

/*
 A table: O(1) membership through a key per member, with values.
 */
typedef struct mcds_table mcds_table;

/*
 A sliding-window counter: events in the last `slots - 1` slots.
 */
typedef struct mcds_window mcds_window;

/*
 A result code: `MCDS_OK` or one of the `MCDS_…` error codes.
 */
typedef uint32_t mcds_result;

/*
 The answer of `mcds_limiter_check` and `mcds_limiter_peek`.
 */
typedef struct {
  /*
   Whether the request is allowed.
   */
  bool allowed;
  /*
   How many more requests would be allowed now.
   */
  uint64_t remaining;
  /*
   When denied, milliseconds until a request would be allowed (else 0).
   */
  uint64_t retry_after_ms;
} mcds_decision;

/*
 Success.
 */
enum { MCDS_OK = 0 };

/*
 A required pointer argument was NULL.
 */
enum { MCDS_NULL_ARGUMENT = 1 };

/*
 A name was not valid UTF-8.
 */
enum { MCDS_INVALID_UTF8 = 2 };

/*
 mcds panicked (a bug); the call had no effect on its outputs.
 */
enum { MCDS_PANIC = 3 };

/*
 mcds found a bug in itself without panicking (a reply of the wrong kind,
 say); please report it with the message.
 */
enum { MCDS_INTERNAL = 4 };

/*
 The key (built from a name) is empty, too long or has spaces or control bytes.
 */
enum { MCDS_INVALID_KEY = 100 };

/*
 The value would exceed the item size limit.
 */
enum { MCDS_VALUE_TOO_LARGE = 101 };

/*
 An argument is out of range (a TTL of 0, say) or the call does not fit the handle's state.
 */
enum { MCDS_INVALID_ARGUMENT = 102 };

/*
 incr/decr found a value that is not a number.
 */
enum { MCDS_NON_NUMERIC = 103 };

/*
 Stored bytes could not be decoded.
 */
enum { MCDS_CORRUPT = 104 };

/*
 The server could not be reached; the request was not applied.
 */
enum { MCDS_IO = 200 };

/*
 The server is marked down after a failed connection; not applied.
 */
enum { MCDS_SERVER_DOWN = 201 };

/*
 The server did not answer in time; the request was not applied.
 Renamed after 0.1: this code was `MCDS_IO_TIMEOUT`, and `MCDS_TIMEOUT`
 was 302 (now `MCDS_WAIT_TIMEOUT`).
 */
enum { MCDS_TIMEOUT = 202 };

/*
 The request was sent but no reply came: it may have been applied.
 */
enum { MCDS_AMBIGUOUS = 203 };

/*
 The server is out of memory and does not evict.
 */
enum { MCDS_OUT_OF_MEMORY = 204 };

/*
 The server reported an error.
 */
enum { MCDS_SERVER_ERROR = 205 };

/*
 The server's reply could not be understood.
 */
enum { MCDS_PROTOCOL = 206 };

/*
 A CAS loop kept losing to concurrent writers.
 */
enum { MCDS_CONFLICT = 300 };

/*
 The backend does not support the operation.
 */
enum { MCDS_UNSUPPORTED = 301 };

/*
 A blocking call (lock acquire) gave up waiting.
 Renamed after 0.1: this code was `MCDS_TIMEOUT`, a name now given to 202.
 */
enum { MCDS_WAIT_TIMEOUT = 302 };

/*
 An error this version of the header does not know (a newer libmcds).
 */
enum { MCDS_OTHER = 999 };


/*
 The library version, e.g. `"0.1.0"`: a static string.
 */
const char *mcds_version(void);

/*
 The name of a result code, e.g. `"MCDS_INVALID_KEY"`: a static string
 that must not be freed. Unknown codes give `"MCDS_UNKNOWN"`.
 */
const char *mcds_result_name(mcds_result result);

/*
 The message of the last failed call on this thread (empty if none): what
 happened and what to do. Valid until the next mcds call on this thread;
 must not be freed.
 */
const char *mcds_last_error_message(void);

/*
 Create an embedded in-process store (memcached semantics, no server).

 `out` must be NULL or writable.
 */
mcds_result mcds_store_new_memory(mcds_store **out);

/*
 Create a store on memcached: `servers` is `"host:port[,host:port...]"`.
 Connections are made on first use, so a server that is down shows up as
 an error of the first call that needs it.

 `servers` must be NULL or a NUL-terminated string; `out` NULL or writable.
 */
mcds_result mcds_store_new_memcached(const char *servers, mcds_store **out);

/*
 Free a store (NULL is a no-op). Structures made from it keep working:
 they hold their own reference.

 `store` must be NULL or a live store, not used after this call.
 */
void mcds_store_free(mcds_store *store);

/*
 Create the counter `name` on `store`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_counter_new(const mcds_store *store, const char *name, mcds_counter **out);

/*
 Add `delta`; the new value in `*out_value`. One round trip, atomic.

 `c` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_counter_incr(const mcds_counter *c, uint64_t delta, uint64_t *out_value);

/*
 Subtract `delta` (stopping at 0); the new value in `*out_value`.

 `c` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_counter_decr(const mcds_counter *c, uint64_t delta, uint64_t *out_value);

/*
 The current value (0 if the counter does not exist).

 `c` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_counter_get(const mcds_counter *c, uint64_t *out_value);

/*
 Free a counter (NULL is a no-op).

 `c` must be NULL or a live counter, not used after this call.
 */
void mcds_counter_free(mcds_counter *c);

/*
 Create the lock `name` with a lease of `ttl_secs` seconds (at least 1).

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_lock_new(const mcds_store *store,
                          const char *name,
                          uint32_t ttl_secs,
                          mcds_lock **out);

/*
 Take the lock if it is free: `*out_acquired` is true if this handle now
 holds it, false if another owner does. One round trip.

 `lock` NULL or live; `out_acquired` NULL or writable.
 */
mcds_result mcds_lock_try_acquire(const mcds_lock *lock, bool *out_acquired);

/*
 Wait up to `timeout_ms` for the lock. `MCDS_WAIT_TIMEOUT` if it stayed taken.

 `lock` NULL or live.
 */
mcds_result mcds_lock_acquire(const mcds_lock *lock, uint32_t timeout_ms);

/*
 Release the lock this handle holds. `*out_released` is true if it was
 still ours, false if the lease had been lost (another owner may hold it
 now; it was not touched). `MCDS_INVALID_ARGUMENT` if the handle holds
 nothing. On any other error (a timeout, a server down, no reply) the
 handle still holds the guard: call `mcds_lock_release` again to retry.

 `lock` NULL or live; `out_released` NULL or writable.
 */
mcds_result mcds_lock_release(const mcds_lock *lock, bool *out_released);

/*
 Free a lock handle (NULL is a no-op), releasing a lease it still holds.

 `lock` must be NULL or a live lock, not used after this call.
 */
void mcds_lock_free(mcds_lock *lock);

/*
 Create the set `name` on `store`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_set_new(const mcds_store *store, const char *name, mcds_set **out);

/*
 Add the member of `len` bytes at `member` (any bytes). One round trip.

 `s` NULL or live; `member` NULL or `len` readable bytes.
 */
mcds_result mcds_set_add(const mcds_set *s, const uint8_t *member, uintptr_t len);

/*
 Remove a member. One round trip; a missing set stays missing.

 `s` NULL or live; `member` NULL or `len` readable bytes.
 */
mcds_result mcds_set_remove(const mcds_set *s, const uint8_t *member, uintptr_t len);

/*
 Whether the set contains the member, in `*out`.

 `s` NULL or live; `member` NULL or `len` readable bytes; `out` NULL or writable.
 */
mcds_result mcds_set_contains(const mcds_set *s, const uint8_t *member, uintptr_t len, bool *out);

/*
 The members in insertion order, as a new list in `*out` (free it with
 `mcds_bytes_list_free`).

 `s` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_set_members(const mcds_set *s, mcds_bytes_list **out);

/*
 Free a set (NULL is a no-op).

 `s` must be NULL or a live set, not used after this call.
 */
void mcds_set_free(mcds_set *s);

/*
 The number of items in `list`, in `*out_len`.

 `list` NULL or live; `out_len` NULL or writable.
 */
mcds_result mcds_bytes_list_len(const mcds_bytes_list *list, uintptr_t *out_len);

/*
 Item `index` of `list`: a pointer to its bytes (owned by the list, valid
 until it is freed; not NUL-terminated) and their length.
 `MCDS_INVALID_ARGUMENT` if `index` is out of range.

 `list` NULL or live; `out_ptr` and `out_len` NULL or writable.
 */
mcds_result mcds_bytes_list_get(const mcds_bytes_list *list,
                                uintptr_t index,
                                const uint8_t **out_data,
                                uintptr_t *out_len);

/*
 Free a list (NULL is a no-op).

 `list` must be NULL or a live list, not used after this call.
 */
void mcds_bytes_list_free(mcds_bytes_list *list);

/*
 The number of events in `list`, in `*out_len`.

 `list` NULL or live; `out_len` NULL or writable.
 */
mcds_result mcds_event_list_len(const mcds_event_list *list, uintptr_t *out_len);

/*
 Event `index` of `list`: its timestamp and a pointer to its payload
 (owned by the list, valid until it is freed) and length.
 `MCDS_INVALID_ARGUMENT` if `index` is out of range.

 `list` NULL or live; the outputs NULL or writable.
 */
mcds_result mcds_event_list_get(const mcds_event_list *list,
                                uintptr_t index,
                                uint64_t *out_at_ms,
                                const uint8_t **out_data,
                                uintptr_t *out_len);

/*
 Free an event list (NULL is a no-op).

 `list` must be NULL or a live list, not used after this call.
 */
void mcds_event_list_free(mcds_event_list *list);

/*
 Create the window counter `name` with `slots` slots (2 to 1000) of
 `slot_secs` seconds.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_window_new(const mcds_store *store,
                            const char *name,
                            uint32_t slot_secs,
                            uint32_t slots,
                            mcds_window **out);

/*
 Count `delta` events now; the current slot's count in `*out_value`.

 `w` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_window_incr(const mcds_window *w, uint64_t delta, uint64_t *out_value);

/*
 The events of the last `slots - 1` complete slots, in `*out_value`.

 `w` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_window_value(const mcds_window *w, uint64_t *out_value);

/*
 Free a window counter (NULL is a no-op).

 `w` must be NULL or a live window counter, not used after this call.
 */
void mcds_window_free(mcds_window *w);

/*
 Create the rate limiter `name`: at most `limit` requests per
 `window_secs` seconds, in a fixed window or (with `sliding`) the
 sliding-window estimate.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_limiter_new(const mcds_store *store,
                             const char *name,
                             uint64_t limit,
                             uint32_t window_secs,
                             bool sliding,
                             mcds_limiter **out);

/*
 Count this request and decide.

 `l` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_limiter_check(const mcds_limiter *l, mcds_decision *out);

/*
 Decide without counting a request.

 `l` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_limiter_peek(const mcds_limiter *l, mcds_decision *out);

/*
 Free a rate limiter (NULL is a no-op).

 `l` must be NULL or a live limiter, not used after this call.
 */
void mcds_limiter_free(mcds_limiter *l);

/*
 Create the event log `name`: `chunks` chunks (2 to 10000) of `chunk_secs`
 seconds; it keeps `(chunks - 1) * chunk_secs` seconds of events.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_log_new(const mcds_store *store,
                         const char *name,
                         uint32_t chunk_secs,
                         uint32_t chunks,
                         mcds_log **out);

/*
 Record an event now with `len` payload bytes; its timestamp (Unix ms)
 in `*out_at_ms`. One round trip.

 `l` NULL or live; `payload` NULL or `len` readable bytes; `out_at_ms` NULL or writable.
 */
mcds_result mcds_log_put(const mcds_log *l,
                         const uint8_t *payload,
                         uintptr_t len,
                         uint64_t *out_at_ms);

/*
 The events with `first_ms <= at <= last_ms` within capacity, in time
 order, as a new list in `*out`.

 `l` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_log_fetch(const mcds_log *l,
                           uint64_t first_ms,
                           uint64_t last_ms,
                           mcds_event_list **out);

/*
 Free an event log (NULL is a no-op).

 `l` must be NULL or a live log, not used after this call.
 */
void mcds_log_free(mcds_log *l);

/*
 Create the table `name`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_table_new(const mcds_store *store, const char *name, mcds_table **out);

/*
 Set `member`'s value (adding the member if new). Two round trips.

 `t` NULL or live; `member`/`value` NULL or readable for their lengths.
 */
mcds_result mcds_table_set(const mcds_table *t,
                           const uint8_t *member,
                           uintptr_t member_len,
                           const uint8_t *value,
                           uintptr_t value_len);

/*
 Whether `member` is present, in `*out`. One round trip.

 `t` NULL or live; `member` NULL or readable; `out` NULL or writable.
 */
mcds_result mcds_table_has(const mcds_table *t,
                           const uint8_t *member,
                           uintptr_t member_len,
                           bool *out);

/*
 `member`'s value: a list of one item in `*out_value` if present (free it
 with `mcds_bytes_list_free`), or NULL if absent.

 `t` NULL or live; `member` NULL or readable; `out_value` NULL or writable.
 */
mcds_result mcds_table_get(const mcds_table *t,
                           const uint8_t *member,
                           uintptr_t member_len,
                           mcds_bytes_list **out_value);

/*
 Remove `member`; whether it was present, in `*out_existed`.

 `t` NULL or live; `member` NULL or readable; `out_existed` NULL or writable.
 */
mcds_result mcds_table_delete(const mcds_table *t,
                              const uint8_t *member,
                              uintptr_t member_len,
                              bool *out_existed);

/*
 The members in insertion order, as a new list in `*out`.

 `t` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_table_keys(const mcds_table *t, mcds_bytes_list **out);

/*
 Free a table (NULL is a no-op).

 `t` must be NULL or a live table, not used after this call.
 */
void mcds_table_free(mcds_table *t);

/*
 Create the HyperLogLog `name` on `store`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_hll_new(const mcds_store *store, const char *name, mcds_hll **out);

/*
 PFADD the element of `len` bytes at `element`; in `*out_changed`
 whether the estimate may have changed. Two round trips (one when
 nothing changes).

 `h` NULL or live; `element` NULL or `len` readable bytes; `out_changed`
 NULL or writable.
 */
mcds_result mcds_hll_add(const mcds_hll *h,
                         const uint8_t *element,
                         uintptr_t len,
                         bool *out_changed);

/*
 PFCOUNT: the estimated number of distinct elements, in `*out`. One round
 trip.

 `h` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_hll_count(const mcds_hll *h, uint64_t *out);

/*
 PFMERGE: write the union of `target` and the `count` sketches at
 `sources` into `target`.

 `target` NULL or live; `sources` NULL or `count` readable pointers, each
 NULL or live.
 */
mcds_result mcds_hll_merge(const mcds_hll *target, const mcds_hll *const *sources, uintptr_t count);

/*
 Free a HyperLogLog handle (NULL is a no-op).

 `h` must be NULL or a live handle, not used after this call.
 */
void mcds_hll_free(mcds_hll *h);

/*
 Create the Bloom filter `name` for `expected_items` at
 `false_positive_rate` (between 0 and 1, e.g. 0.01). Every client must
 use the same two numbers.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_bloom_new(const mcds_store *store,
                           const char *name,
                           uint64_t expected_items,
                           double false_positive_rate,
                           mcds_bloom **out);

/*
 Add an element; in `*out_new` whether it was new (some bit was clear).

 `b` NULL or live; `element` NULL or `len` readable bytes; `out_new` NULL
 or writable.
 */
mcds_result mcds_bloom_add(const mcds_bloom *b,
                           const uint8_t *element,
                           uintptr_t len,
                           bool *out_new);

/*
 Whether the element may have been added (no false negatives), in
 `*out`. One round trip.

 `b` NULL or live; `element` NULL or `len` readable bytes; `out` NULL or
 writable.
 */
mcds_result mcds_bloom_contains(const mcds_bloom *b,
                                const uint8_t *element,
                                uintptr_t len,
                                bool *out);

/*
 Free a Bloom filter handle (NULL is a no-op).

 `b` must be NULL or a live handle, not used after this call.
 */
void mcds_bloom_free(mcds_bloom *b);

/*
 Create the bitmap `name` whose bit 0 is the unit starting at
 `start_unix_secs`, one bit per `unit_ms` milliseconds (at least 1).

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_bitmap_new(const mcds_store *store,
                            const char *name,
                            uint64_t start_unix_secs,
                            uint64_t unit_ms,
                            mcds_bitmap **out);

/*
 SETBIT `index` to 1; the previous bit in `*out_previous`.

 `b` NULL or live; `out_previous` NULL or writable.
 */
mcds_result mcds_bitmap_set(const mcds_bitmap *b, uint64_t index, bool *out_previous);

/*
 Mark the unit containing `at_unix_ms`; the previous bit in
 `*out_previous`. `MCDS_INVALID_ARGUMENT` before the bitmap's start.

 `b` NULL or live; `out_previous` NULL or writable.
 */
mcds_result mcds_bitmap_mark(const mcds_bitmap *b, uint64_t at_unix_ms, bool *out_previous);

/*
 GETBIT `index`, in `*out`.

 `b` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_bitmap_get(const mcds_bitmap *b, uint64_t index, bool *out);

/*
 BITCOUNT of bits `first..=last`, in `*out`. One round trip.

 `b` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_bitmap_count(const mcds_bitmap *b, uint64_t first, uint64_t last, uint64_t *out);

/*
 Free a bitmap handle (NULL is a no-op).

 `b` must be NULL or a live handle, not used after this call.
 */
void mcds_bitmap_free(mcds_bitmap *b);


