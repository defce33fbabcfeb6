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
 Buckets returned by `mcds_timeseries_range`, `mcds_timeseries_union`
 and `mcds_timeseries_intersection`, oldest first; read with
 `mcds_bucket_list_len` and `mcds_bucket_list_get`, free with
 `mcds_bucket_list_free`.
 */
typedef struct mcds_bucket_list mcds_bucket_list;

/*
 A list of byte strings returned by mcds; read it with
 `mcds_bytes_list_len`/`mcds_bytes_list_get`, free it with
 `mcds_bytes_list_free`.
 */
typedef struct mcds_bytes_list mcds_bytes_list;

/*
 A cancellation token: made with `mcds_cancel_new`, triggered with
 `mcds_cancel_trigger` (from any thread), and put in charge of the calling
 thread's calls with `mcds_cancel_set_current`.
 */
typedef struct mcds_cancel mcds_cancel;

/*
 An exact shared counter.
 */
typedef struct mcds_counter mcds_counter;

/*
 A counter map: named fields, each an atomic signed counter, listed and
 read all at once (Redis' HINCRBY, HINCRBYFLOAT, HGET, HGETALL, HKEYS,
 HDEL, HLEN). What crosses the boundary, exactly:

 * **Fields** are UTF-8 byte strings given as a pointer and a length (1
   to 1024 bytes; any UTF-8, a NUL included), as they come back from
   `mcds_counter_map_fields` and `mcds_counter_map_get_all` (items of an
   `mcds_bytes_list`). Bytes that are not UTF-8 are `MCDS_INVALID_UTF8`;
   an empty or longer field is `MCDS_INVALID_ARGUMENT`.
 * **Whole values** (`_incr`, `_get`, `_get_all`) are `int64_t` counts
   of the map's units, `10^-scale`: whole units (scale 0) unless the
   handle came from `mcds_counter_map_with_scale`. A field holds −2^61 to
   2^61 − 1 units.
 * **Decimals** (`_incr_decimal`, `_get_decimal`, `_get_all_decimal`)
   are text: an amount goes in as a NUL-terminated `[+-]digits[.digits]`
   parsed exactly at the map's scale (more places than the scale, unless
   zeros, is `MCDS_INVALID_ARGUMENT`: nothing is rounded), and a value
   comes out as text with exactly `scale` places (`"100.0"`, `"-0.25"`).
   Text carries every digit at any scale and no double is involved: 0.1
   added 1000 times at scale 1 is exactly `"100.0"`. Bindings turn it
   into their exact decimal type. Only `mcds_counter_map_incr_f64` takes
   a `double`, rounded to the scale from its shortest decimal form.

 Strings handed out (decimals, the name, keys) are the caller's, freed
 with `mcds_string_free`; lists with `mcds_bytes_list_free` and
 `mcds_int_list_free` (`get_all` gives two parallel lists, as
 `mcds_table_entries` does).
 */
typedef struct mcds_counter_map mcds_counter_map;

/*
 Leaderboard entries returned by `mcds_leaderboard_top`, largest count
 first; read with `mcds_entry_list_len` and `mcds_entry_list_get`, free
 with `mcds_entry_list_free`.
 */
typedef struct mcds_entry_list mcds_entry_list;

/*
 Events returned by `mcds_log_fetch` and `mcds_log_since`; read with `mcds_event_list_len` and
 `mcds_event_list_get`, free with `mcds_event_list_free`.
 */
typedef struct mcds_event_list mcds_event_list;

/*
 A HyperLogLog: distinct counting in 12 KiB (PFADD, PFCOUNT, PFMERGE).
 */
typedef struct mcds_hll mcds_hll;

/*
 A set of 64-bit integers, stored as decimal members of a set.
 */
typedef struct mcds_int_array mcds_int_array;

/*
 A list of 64-bit integers returned by mcds (`mcds_int_array_members`);
 read it with `mcds_int_list_len`/`mcds_int_list_get` or all at once with
 `mcds_int_list_data`, free it with `mcds_int_list_free`.
 */
typedef struct mcds_int_list mcds_int_list;

/*
 A leaderboard: members with counts, exact while at most `capacity`
 distinct members were counted, each count within its error past that.
 */
typedef struct mcds_leaderboard mcds_leaderboard;

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
 A packed series: a saturating counter per time slot, many slots packed
 into one item per period.
 */
typedef struct mcds_packed_series mcds_packed_series;

/*
 A scalable Bloom filter: a first layer for `initial_capacity` elements,
 then larger layers as it fills, for a compound false-positive rate
 below the one it was created with.
 */
typedef struct mcds_scalable_bloom mcds_scalable_bloom;

/*
 A set of byte strings.
 */
typedef struct mcds_set mcds_set;

/*
 Counts events in the previous period of `period_secs` seconds (two keys
 swapping roles: one counted into, one shown).
 */
typedef struct mcds_shadow_counter mcds_shadow_counter;

/*
 A set spread over `shards` items by a stable hash of the member.
 */
typedef struct mcds_sharded_set mcds_sharded_set;

/*
 Slots returned by `mcds_packed_series_range`, oldest first; read with
 `mcds_slot_list_len` and `mcds_slot_list_get`, free with
 `mcds_slot_list_free`.
 */
typedef struct mcds_slot_list mcds_slot_list;

/*
 A store: the embedded in-process store or real memcached, and the key
 prefix of the structures made from this handle.
 */
typedef struct mcds_store mcds_store;

/*
 Options for a store; see `mcds_store_builder_new`.
 */
typedef struct mcds_store_builder mcds_store_builder;

/*
 A table: O(1) membership through a key per member, with values.
 */
typedef struct mcds_table mcds_table;

/*
 A time series: count, exact sum, min and max of `int64_t` samples per
 time bucket, at one or more resolutions.
 */
typedef struct mcds_timeseries mcds_timeseries;

/*
 The new value an updater chooses (`mcds_update_set`): opaque, valid only
 during the updater's call.
 */
typedef struct mcds_update mcds_update;

/*
 A view counter whose true total lives elsewhere (a database), cached for
 real-time display.
 */
typedef struct mcds_view_counter mcds_view_counter;

/*
 A sliding-window counter: events in the last `slots - 1` slots.
 */
typedef struct mcds_window mcds_window;

/*
 A result code: `MCDS_OK` or one of the `MCDS_…` error codes.
 */
typedef uint32_t mcds_result;

/*
 An updater: given the key's current value, chooses the new one.

 The contract:

 * `current` points to `current_len` bytes (NULL when `exists` is false:
   the key is missing), valid only during the call; `out` likewise.
 * To write a new value, call `mcds_update_set(out, value, len)` (the
   bytes are copied; the last call wins) and return `MCDS_OK`. Returning
   `MCDS_OK` without calling it leaves the item as it is. Any other code
   aborts: nothing is written, and the call fails with
   `MCDS_CALLBACK_FAILED` naming that code.
 * It may be called **several times** in one `mcds_store_update`: once
   per attempt, when another client changed the item in between (a lost
   CAS race). It must compute the value from `current` alone and have no
   other effects. It is called **on the calling thread**, before the
   call returns, never afterwards.
 * It may call mcds functions (they overwrite the thread's last error
   message), and **must return normally**: no `longjmp` or C++ exception
   out of it.
 */
typedef mcds_result (*mcds_updater)(void *ctx,
                                    const uint8_t *current,
                                    uintptr_t current_len,
                                    bool exists,
                                    mcds_update *out);

/*
 A loader: writes the stored total (a `SELECT views FROM …`, say) to
 `*out_value` and returns `MCDS_OK`, or returns any other code to fail.

 The contract, for every function that takes one:

 * It is called **at most once per call**, only on a cache miss, **on the
   calling thread**, before the call returns; never afterwards, never
   from another thread. `ctx` is the pointer passed with it, untouched
   (it may be NULL); mcds never reads or frees it.
 * `out_value` points to a `uint64_t` that starts at 0 and is valid only
   during the callback: if it returns `MCDS_OK` without writing, 0 is the
   total.
 * Any code other than `MCDS_OK` makes the call fail with
   `MCDS_CALLBACK_FAILED` (the message names the loader's code) and
   nothing is counted or cached.
 * It may call mcds functions, including on the same handle (mcds holds
   no lock while it runs); they overwrite the thread's last error
   message.
 * It **must return normally**: no `longjmp` out of it, no C++ exception
   or Rust panic escaping it. Unwinding or jumping over the libmcds frames
   below it is undefined behaviour (a Rust panic there aborts the
   process).
 */
typedef mcds_result (*mcds_loader)(void *ctx, uint64_t *out_value);

/*
 A signed 128-bit integer in two halves, for the exact sums of a time
 series (C has no portable 128-bit type). The value is
 `hi * 2^64 + lo`: with GCC or Clang,
 `(__int128)x.hi * ((__int128)1 << 64) + x.lo` (not `x.hi << 64`, which
 is undefined for a negative `hi`). It fits an `int64_t` exactly when
 `hi` is the sign of `lo` read as an `int64_t`
 (`x.hi == ((int64_t)x.lo < 0 ? -1 : 0)`), and is then `(int64_t)x.lo`.
 */
typedef struct {
  /*
   The high 64 bits, signed: the value divided by 2^64, rounded down.
   */
  int64_t hi;
  /*
   The low 64 bits: the value modulo 2^64.
   */
  uint64_t lo;
} mcds_i128;

/*
 The aggregates of the samples of a bucket or a range: how many, their
 exact sum, the smallest and the largest. All zeros when a read found no
 sample (its `out_found` says so).
 */
typedef struct {
  /*
   How many samples.
   */
  uint64_t count;
  /*
   Their exact sum (see `mcds_i128`).
   */
  mcds_i128 sum;
  /*
   The smallest sample.
   */
  int64_t min;
  /*
   The largest sample.
   */
  int64_t max;
} mcds_stats;

/*
 One non-empty bucket of a time series read.
 */
typedef struct {
  /*
   The bucket's start, Unix milliseconds (a multiple of the step).
   */
  uint64_t start_ms;
  /*
   Its samples' aggregates.
   */
  mcds_stats stats;
} mcds_bucket;

/*
 One slot of a packed series read.
 */
typedef struct {
  /*
   The slot's start, Unix milliseconds (a multiple of the slot length).
   */
  uint64_t start_ms;
  /*
   Its count (0 when nothing was counted).
   */
  uint32_t value;
} mcds_slot;

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
 A polling position in an event log: the timestamp of the last event
 seen and how many events with exactly that timestamp were seen. A plain
 value the caller owns: copy it, store it (two integers), pass it back.
 `{0, 0}` is the start (every event still in the log); `{t + 1, 0}` is
 after every event up to and including Unix ms `t`.
 */
typedef struct {
  /*
   Unix milliseconds of the last event seen.
   */
  uint64_t at_ms;
  /*
   How many events at `at_ms` were seen.
   */
  uint64_t seen_at_ms;
} mcds_cursor;

/*
 One resolution of a time series: buckets of `step_ms`, readable for
 `retention_ms` after each bucket's end (at least one step, at most 100
 years).
 */
typedef struct {
  /*
   The bucket length, whole milliseconds (at least 1).
   */
  uint64_t step_ms;
  /*
   How long a bucket stays readable after its end, milliseconds.
   */
  uint64_t retention_ms;
} mcds_resolution;

/*
 What `mcds_leaderboard_summary` reports about a whole board. A plain
 value the caller owns.
 */
typedef struct {
  /*
   How many members the board keeps (its capacity).
   */
  uint32_t capacity;
  /*
   `N`: the sum of every increment ever applied.
   */
  uint64_t total;
  /*
   Whether every count is exact (no member was ever replaced).
   */
  bool exact;
  /*
   The most a count on the board overestimates, and the most a member
   off the board can have been counted: 0 while exact, else at most
   `total / capacity`.
   */
  uint64_t max_error;
  /*
   How many members are on the board.
   */
  uintptr_t members;
} mcds_board_summary;

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
 A callback the caller passed in (the loader of `mcds_view_counter_view`)
 returned a code other than `MCDS_OK`; the message names that code. The
 call had no effect.
 */
enum { MCDS_CALLBACK_FAILED = 5 };

/*
 The call was cancelled through its thread's `mcds_cancel` token
 (`mcds_cancel_trigger`) while it waited: it stopped waiting, and a write
 it made may have been applied (as with `MCDS_AMBIGUOUS`).
 */
enum { MCDS_CANCELLED = 6 };

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
 A read cannot vouch for the data: its server lost items (a restart, a
 flush, an eviction) since it could have been written.
 */
enum { MCDS_LOST = 105 };

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
 Create an embedded in-process store (memcached semantics, no server)
 with the defaults: a 64 MiB budget with LRU eviction and 1 MiB items
 (`mcds_store_builder` sets others). `*out` is a new handle the caller
 owns: free it with `mcds_store_free`.

 `out` must be NULL or writable.
 */
mcds_result mcds_store_new_memory(mcds_store **out);

/*
 Create a store on memcached: `servers` is `"host:port[,host:port...]"`
 (borrowed for the call). Connections are made on first use, so a server
 that is down shows up as an error of the first call that needs it.
 Timeouts are 1 s (`mcds_store_builder` sets others). `*out` is a new
 handle the caller owns: free it with `mcds_store_free`.

 `servers` must be NULL or a NUL-terminated string; `out` NULL or writable.
 */
mcds_result mcds_store_new_memcached(const char *servers, mcds_store **out);

/*
 Create a store from a URL that says which store and how, in one string
 (the same string the CLI takes in `MCDS_SERVERS`):
 `memcached://host:port[,host:port...][?options]` (or just the server
 list), `text://host:port[,...][?options]` for the classic text protocol
 (memcached before 1.6; with `proxy`, a proxy such as twemproxy, where
 everything that needs CAS, locks included, is `MCDS_UNSUPPORTED`), or
 `memory://[?options]` for the embedded store. Options:
 `ketama` (place keys as libmemcached's ketama does, to share a pool's
 keys with php-memcached or pylibmc), `distribution=rendezvous|ketama`,
 `timeout_ms`, `connect_timeout_ms`, `io_timeout_ms` (1 to 3 600 000),
 `item_size_limit` (bytes, or with k/m: 1024 to 1 GiB), `memory_limit`
 and `evict=true|false` (embedded store), `prefix` (as
 `mcds_store_with_prefix`); values may be percent-encoded. Example:
 `"memcached://10.0.0.1:11211,10.0.0.2:11211?ketama&timeout_ms=500&prefix=app:"`.

 A malformed URL, an unknown, repeated or misplaced option, or a value
 out of range is `MCDS_INVALID_ARGUMENT`, its message naming it; a bad
 prefix `MCDS_INVALID_KEY`. TLS (`memcached+tls://`, with `ca_file`,
 `client_cert`, `client_key`, `server_name`), unix sockets
 (`unix:/path`) and memcached's ASCII auth (`user:password@`, or the
 environment's `MCDS_USERNAME`/`MCDS_PASSWORD`) are taken as the README's
 store URL table says; credentials are never repeated in a message, and
 a TLS file that cannot be read is `MCDS_INVALID_ARGUMENT` here.
 Connections are made on first use.
 `url` is borrowed for the call. `*out` is a new handle the caller owns:
 free it with `mcds_store_free`.

 `url` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_store_new_url(const char *url, mcds_store **out);

/*
 A new handle on the same store (the same connections, or the same
 embedded memory) whose structures keep their items under keys starting
 with `prefix`: the lock `"job"` made from it is `<prefix>lock:job:owner`.
 Several applications can so share one memcached pool without their
 names meeting (`"billing/"`, `"search/"`). The prefix replaces any prefix
 `store` has; `""` gives a handle with none.

 `prefix` (NUL-terminated UTF-8, borrowed for the call) must be made of
 key bytes (no spaces or control bytes) and shorter than 250 bytes:
 `MCDS_INVALID_KEY` otherwise. `store` is unchanged and stays the
 caller's. `*out` is a new handle the caller owns: free it with
 `mcds_store_free`; either handle can be freed first.

 `store` NULL or live; `prefix` NULL or NUL-terminated; `out` NULL or
 writable.
 */
mcds_result mcds_store_with_prefix(const mcds_store *store, const char *prefix, mcds_store **out);

/*
 Free a store handle (NULL is a no-op). Structures made from it keep
 working: they hold their own reference to the store, which closes its
 connections when the last user is gone.

 `store` must be NULL or a live store, not used after this call.
 */
void mcds_store_free(mcds_store *store);

/*
 Create a builder with every option at its default. `*out` is a new
 handle the caller owns: free it with `mcds_store_builder_free` (stores
 built from it do not need it).

 `out` must be NULL or writable.
 */
mcds_result mcds_store_builder_new(mcds_store_builder **out);

/*
 How long dialing a memcached server may take, in milliseconds (default
 1000). 1 to 3 600 000 (one hour); 0 or more than that is
 `MCDS_INVALID_ARGUMENT`. Memcached stores only.

 `b` NULL or live.
 */
mcds_result mcds_store_builder_set_connect_timeout_ms(const mcds_store_builder *b, uint32_t ms);

/*
 How long one request and its reply may take on memcached, in
 milliseconds (default 1000). A call that has to dial first may also
 spend up to the connect timeout. 1 to 3 600 000 (one hour); 0 or more
 than that is `MCDS_INVALID_ARGUMENT`. Memcached stores only.

 `b` NULL or live.
 */
mcds_result mcds_store_builder_set_io_timeout_ms(const mcds_store_builder *b, uint32_t ms);

/*
 The largest item, in bytes, counting key, value and 59 bytes of
 overhead (default 1 MiB). For memcached, set it to the servers' `-I`:
 larger values are refused with `MCDS_VALUE_TOO_LARGE` before they are
 sent. An append (sets and logs grow by appends) adds to an item whose
 size mcds has not read, so memcached checks the total itself; its
 refusal is `MCDS_VALUE_TOO_LARGE` too, whatever this limit says. 1024 to
 1 GiB, as memcached's `-I`; else `MCDS_INVALID_ARGUMENT`. Both stores.

 `b` NULL or live.
 */
mcds_result mcds_store_builder_set_item_size_limit(const mcds_store_builder *b, uint64_t bytes);

/*
 The embedded store's memory budget in bytes, counting each item as key,
 value and 59 bytes of overhead (default 64 MiB, like `memcached -m 64`).
 Memory is taken as items are written, not up front. 1024 bytes to 1 TiB
 (and at most the address space); else `MCDS_INVALID_ARGUMENT`. Embedded
 store only.

 `b` NULL or live.
 */
mcds_result mcds_store_builder_set_memory_limit(const mcds_store_builder *b, uint64_t bytes);

/*
 What the embedded store does when its budget is full: evict the least
 recently used items (`true`, the default, like memcached) or refuse the
 write with `MCDS_OUT_OF_MEMORY` (`false`, like `memcached -M`). Embedded
 store only.

 `b` NULL or live.
 */
mcds_result mcds_store_builder_set_evict(const mcds_store_builder *b, bool evict);

/*
 Build an embedded in-process store with the builder's options. The
 builder is unchanged and stays the caller's. `*out` is a new handle the
 caller owns: free it with `mcds_store_free`. `MCDS_INVALID_ARGUMENT` if
 a memcached-only option (a timeout) was set.

 `b` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_store_builder_build_memory(const mcds_store_builder *b, mcds_store **out);

/*
 Build a store on memcached with the builder's options: `servers` is
 `"host:port[,host:port...]"` (borrowed for the call), as for
 `mcds_store_new_memcached`. The builder is unchanged and stays the
 caller's. `*out` is a new handle the caller owns: free it with
 `mcds_store_free`. `MCDS_INVALID_ARGUMENT` if an embedded-store option
 (the memory budget or eviction) was set.

 `b` NULL or live; `servers` NULL or NUL-terminated; `out` NULL or
 writable.
 */
mcds_result mcds_store_builder_build_memcached(const mcds_store_builder *b,
                                               const char *servers,
                                               mcds_store **out);

/*
 Free a builder (NULL is a no-op). Stores built from it are unaffected.

 `b` must be NULL or a live builder, not used after this call.
 */
void mcds_store_builder_free(mcds_store_builder *b);

/*
 Create a cancellation token, not triggered. `*out` is a new handle the
 caller owns: free it with `mcds_cancel_free` (after no thread has it as
 its current token any more).

 `out` must be NULL or writable.
 */
mcds_result mcds_cancel_new(mcds_cancel **out);

/*
 Trigger `cancel`, from any thread: every call waiting for memcached under
 it (on threads that made it their current token) stops waiting now and
 returns `MCDS_CANCELLED`, and so does every later call under it. A
 triggered token stays triggered; make a new one for the next call.

 A cancelled call stopped waiting, not necessarily before its request
 reached the server: a write may have been applied, as with
 `MCDS_AMBIGUOUS`, and the message says what the structure made of it
 (a half-done write undone, or what may count). So that such undoing
 can run, a token stops one request per call: the rest of that call
 runs to its end, each request bounded by the store's I/O timeout. A
 call that waits for something else than a reply (a lock's backoff
 between attempts, a `text://` store's request, which blocks its
 thread) stops at its next request instead. Freeing a handle is never
 cancelled. Idempotent.

 `cancel` must be NULL or live.
 */
mcds_result mcds_cancel_trigger(const mcds_cancel *cancel);

/*
 Make `cancel` the calling thread's current token: the thread's later
 calls can be stopped by `mcds_cancel_trigger(cancel)`, until it sets
 another token or NULL (none, the default). The thread keeps its own
 reference, so `cancel` may be freed while it is current; set NULL before
 the thread ends, or that reference (a few bytes) is never freed. Calls made
 without a token take a store's blocking path, which is the fastest
 for one thread; under a token they take its async path.

 `cancel` must be NULL or live.
 */
mcds_result mcds_cancel_set_current(const mcds_cancel *cancel);

/*
 Free a token (NULL is ignored). Threads that still have it as their
 current token keep it until they set another.

 `cancel` must be NULL or a token from `mcds_cancel_new`, not yet freed.
 */
void mcds_cancel_free(mcds_cancel *cancel);

/*
 Inside an updater: write `value` (`len` bytes, copied; NULL when `len`
 is 0) as the key's new value. Another call replaces it.

 `out` NULL or the `out` an updater was given, during that call; `value`
 NULL or `len` readable bytes.
 */
mcds_result mcds_update_set(mcds_update *out, const uint8_t *value, uintptr_t len);

/*
 Update `key` (the store's prefix in front, as it is: a raw key, not a
 structure name) with a CAS read-modify-write: read it, call
 `updater(ctx, …)` for the new value, write that only if nobody changed
 the item since the read, and try again (reading afresh) if someone did,
 up to `max_attempts` reads (0: 64). The written item expires after
 `ttl_secs` seconds, or never with 0.

 `*out_written` (NULL allowed) says whether a value was written: false
 when the updater chose to leave the item. Errors: `MCDS_CONFLICT` after
 `max_attempts` lost races (nothing written by this call);
 `MCDS_CALLBACK_FAILED` when the updater returned another code than
 `MCDS_OK` (nothing written); `MCDS_UNSUPPORTED` on a store without CAS
 (memcached `-C`, or the text protocol behind a proxy), before the
 updater runs; `MCDS_NULL_ARGUMENT` if `updater` is NULL. See
 `mcds_updater` for the callback's contract.

 `store` NULL or live; `key` NULL or NUL-terminated; `updater` NULL or
 keeping the `mcds_updater` contract with `ctx`; `out_written` NULL or
 writable.
 */
mcds_result mcds_store_update(const mcds_store *store,
                              const char *key,
                              uint32_t ttl_secs,
                              uint32_t max_attempts,
                              mcds_updater updater,
                              void *ctx,
                              bool *out_written);

/*
 `key`'s value: a list of one item in `*out_value` (free it with
 `mcds_bytes_list_free`), or NULL if the key is absent. One round trip.

 `store` NULL or live; `key` NULL or `key_len` readable bytes;
 `out_value` NULL or writable.
 */
mcds_result mcds_store_get(const mcds_store *store,
                           const uint8_t *key,
                           uintptr_t key_len,
                           mcds_bytes_list **out_value);

/*
 Store `value` under `key`, expiring after `ttl_secs` seconds (0:
 never). One round trip; an error means it was not stored, or
 `MCDS_AMBIGUOUS` that it may have been.

 `store` NULL or live; `key` NULL or `key_len` readable bytes; `value`
 NULL or `value_len` readable bytes (NULL with length 0 is the empty
 value).
 */
mcds_result mcds_store_set(const mcds_store *store,
                           const uint8_t *key,
                           uintptr_t key_len,
                           const uint8_t *value,
                           uintptr_t value_len,
                           uint32_t ttl_secs);

/*
 Store `value` under `key` only if the key is absent; whether it was
 stored, in `*out_added` (NULL allowed). One round trip.

 As `mcds_store_set`; `out_added` NULL or writable.
 */
mcds_result mcds_store_add(const mcds_store *store,
                           const uint8_t *key,
                           uintptr_t key_len,
                           const uint8_t *value,
                           uintptr_t value_len,
                           uint32_t ttl_secs,
                           bool *out_added);

/*
 Delete `key`; whether it existed, in `*out_existed` (NULL allowed).
 One round trip.

 `store` NULL or live; `key` NULL or `key_len` readable bytes;
 `out_existed` NULL or writable.
 */
mcds_result mcds_store_delete(const mcds_store *store,
                              const uint8_t *key,
                              uintptr_t key_len,
                              bool *out_existed);

/*
 Add `delta` to the counter under `key`, as memcached's `incr`: the new
 value in `*out_value` and true in `*out_found`, or false in
 `*out_found` (and `*out_value` left alone) if the key is absent, which
 creates nothing. `MCDS_NON_NUMERIC` if the value is not a decimal
 number. Counters are 64-bit unsigned, as memcached's.

 `store` NULL or live; `key` NULL or `key_len` readable bytes;
 `out_value` and `out_found` NULL or writable.
 */
mcds_result mcds_store_incr(const mcds_store *store,
                            const uint8_t *key,
                            uintptr_t key_len,
                            uint64_t delta,
                            uint64_t *out_value,
                            bool *out_found);

/*
 Add `delta` to the counter under `key`, or create it with the value
 `initial` (not `initial + delta`, as php-memcached's `increment` with an
 initial value) expiring after `ttl_secs` seconds (0: never) if it is
 absent. Atomic: two callers creating it at once are both counted. The
 new value in `*out_value`.

 `store` NULL or live; `key` NULL or `key_len` readable bytes;
 `out_value` NULL or writable.
 */
mcds_result mcds_store_incr_or_init(const mcds_store *store,
                                    const uint8_t *key,
                                    uintptr_t key_len,
                                    uint64_t delta,
                                    uint64_t initial,
                                    uint32_t ttl_secs,
                                    uint64_t *out_value);

/*
 Create the counter `name` on `store`. `*out` is a new handle the caller
 owns: free it with `mcds_counter_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_counter_new(const mcds_store *store, const char *name, mcds_counter **out);

/*
 Create the counter kept under exactly the memcached key `key` (`key_len`
 bytes, borrowed for the call), for a counter another application already
 uses: PHP code calling php-memcached's `increment("hits")`, say. No
 `counter:` naming is added, and neither is a key prefix: the prefix of a
 store handle made with `mcds_store_with_prefix` is NOT applied, so the
 counter is on the same key whichever handle of the store it is made from
 (a prefix the other application uses belongs in `key` itself).
 memcached keeps counters as decimal text whoever writes them, so
 increments from both sides add up, and `mcds_counter_get` reads the
 other side's value. An item holding something other than a decimal
 number is `MCDS_CORRUPT` to `mcds_counter_get` and `MCDS_NON_NUMERIC` to
 an increment or decrement (the server's refusal). On a pool, both sides must place the key on the
 same server (a single server, or the same distribution, such as ketama).

 `key` must be a memcached key: 1 to 250 bytes, none of them a space, a
 control byte or DEL (bytes from 0x80, UTF-8 say, are fine); else
 `MCDS_INVALID_KEY`, the reason in `mcds_last_error_message`. It may be
 NULL only when `key_len` is 0, which is the empty key (invalid). The
 handle works as one from `mcds_counter_new` (`mcds_counter_with_ttl`,
 `mcds_counter_reset`, `mcds_counter_incr_many` with the store's other
 counters). `store` is unchanged and stays the caller's. `*out` is a new
 handle the caller owns: free it with `mcds_counter_free`.

 `store` NULL or live; `key` NULL or `key_len` readable bytes; `out` NULL
 or writable.
 */
mcds_result mcds_counter_new_with_key(const mcds_store *store,
                                      const uint8_t *key,
                                      uintptr_t key_len,
                                      mcds_counter **out);

/*
 A new handle on the same counter whose increments give the item a TTL
 of `ttl_secs` seconds when they create it (an increment of an existing
 counter leaves its expiry alone; after `mcds_counter_reset` or expiry
 the next increment creates it again). 0 means never expires, as
 memcached's exptime 0 (and as `mcds_counter_new`).

 memcached reads an exptime over 30 days (2 592 000 s) as an absolute
 Unix time; mcds converts, so `ttl_secs` always means seconds from the
 write (40 days is 40 days), capped at the last time memcached can parse
 (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
 whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
 seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).

 `c` is unchanged and borrowed for the call. `*out` is a new handle the
 caller owns: free it with `mcds_counter_free`.

 `c` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_counter_with_ttl(const mcds_counter *c, uint32_t ttl_secs, mcds_counter **out);

/*
 Add `delta`; the new value in `*out_value`. One round trip, atomic.

 `c` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_counter_incr(const mcds_counter *c, uint64_t delta, uint64_t *out_value);

/*
 Add `deltas[i]` to `counters[i]` for every `i < count` in one pipelined
 batch: one round trip per server however many counters (a counter may
 appear more than once; its increments apply in order). The increments
 are independent: one failing does not undo the others.

 `counters` and `deltas` (`count` values each) are borrowed for the call;
 `out_values` and `out_results` are the caller's arrays of `count` slots.
 All four may be NULL when `count` is 0, which does nothing and returns
 `MCDS_OK`.

 The call is refused, writing nothing and sending nothing, when an array
 or a `counters[i]` is NULL (`MCDS_NULL_ARGUMENT`), when `count` is over
 100 000 or the counters are not all from one store handle (or handles
 made from it with `mcds_store_with_prefix`) (`MCDS_INVALID_ARGUMENT`).
 Otherwise the batch is sent and every slot is written: `out_results[i]`
 is `MCDS_OK` and `out_values[i]` the counter's new value, or
 `out_results[i]` is that increment's error code and `out_values[i]` 0.
 The return value is then `MCDS_OK` if every increment succeeded, else
 `out_results[j]` for the smallest failing `j` (and
 `mcds_last_error_message` is that increment's message).

 `counters` NULL or `count` readable pointers, each NULL or live;
 `deltas` NULL or `count` readable values; `out_values` and `out_results`
 NULL or `count` writable slots.
 */
mcds_result mcds_counter_incr_many(const mcds_counter *const *counters,
                                   const uint64_t *deltas,
                                   uintptr_t count,
                                   uint64_t *out_values,
                                   mcds_result *out_results);

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
 Delete the counter: it reads 0 again, and the next increment creates
 it anew. One round trip; resetting a missing counter is not an error.

 `c` NULL or live.
 */
mcds_result mcds_counter_reset(const mcds_counter *c);

/*
 Free a counter (NULL is a no-op).

 `c` must be NULL or a live counter, not used after this call.
 */
void mcds_counter_free(mcds_counter *c);

/*
 Create the counter map `name` on `store`, counting whole units (scale
 0; see `mcds_counter_map_with_scale`). `*out` is a new handle the caller
 owns: free it with `mcds_counter_map_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_counter_map_new(const mcds_store *store, const char *name, mcds_counter_map **out);

/*
 A new handle on the same map counting units of `10^-places` (0 to 18,
 else `MCDS_INVALID_ARGUMENT`): the decimal calls then read and write
 text with `places` decimal places, and the whole-value calls count
 those units. The scale is not stored: every client of a map must use
 the same. `m` is unchanged and borrowed for the call. `*out` is a new
 handle the caller owns: free it with `mcds_counter_map_free`.

 `m` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_counter_map_with_scale(const mcds_counter_map *m,
                                        uint32_t places,
                                        mcds_counter_map **out);

/*
 The map's name, as a new NUL-terminated string in `*out_name` that the
 caller owns: free it with `mcds_string_free`.

 `m` NULL or live; `out_name` NULL or writable.
 */
mcds_result mcds_counter_map_name(const mcds_counter_map *m, char **out_name);

/*
 The map's decimal places (0 to 18), in `*out_places`.

 `m` NULL or live; `out_places` NULL or writable.
 */
mcds_result mcds_counter_map_scale(const mcds_counter_map *m, uint32_t *out_places);

/*
 The memcached key of the map's field registry (with the store's
 prefix), as a new NUL-terminated string in `*out_key` that the caller
 owns: free it with `mcds_string_free`. For inspecting the map with
 other tools.

 `m` NULL or live; `out_key` NULL or writable.
 */
mcds_result mcds_counter_map_registry_key(const mcds_counter_map *m, char **out_key);

/*
 The memcached key of `field`'s counter (`field_len` bytes, see the
 module docs), as a new NUL-terminated string in `*out_key` that the
 caller owns: free it with `mcds_string_free`. No round trip.

 `m` NULL or live; `field` NULL or `field_len` readable bytes; `out_key`
 NULL or writable.
 */
mcds_result mcds_counter_map_field_key(const mcds_counter_map *m,
                                       const uint8_t *field,
                                       uintptr_t field_len,
                                       char **out_key);

/*
 HINCRBY: add `by` units (negative to subtract) to `field`, creating it
 at `by` if it does not exist; the new value in `*out_value`. One round
 trip, two on the field's first touch; atomic across every client.

 A field holds −2^61 to 2^61 − 1 units; decrements stop at −2^61, and an
 increment past 2^61 − 1 is undone and refused with
 `MCDS_INVALID_ARGUMENT`. One call adds at most 2^56 − 1 either way,
 else `MCDS_INVALID_ARGUMENT` before anything is sent. A counter another
 program overwrote is `MCDS_NON_NUMERIC`.

 `m` NULL or live; `field` NULL or `field_len` readable bytes;
 `out_value` NULL or writable.
 */
mcds_result mcds_counter_map_incr(const mcds_counter_map *m,
                                  const uint8_t *field,
                                  uintptr_t field_len,
                                  int64_t by,
                                  int64_t *out_value);

/*
 HINCRBYFLOAT without float drift: add the exact decimal `amount` (a
 NUL-terminated `[+-]digits[.digits]`, e.g. `"0.1"`, `"-3"`) at the
 map's scale to `field`; the new value as a new NUL-terminated string in
 `*out_value` (exactly `scale` places) that the caller owns: free it with
 `mcds_string_free`. More places than the scale (unless zeros), any
 other text, or an amount past the bounds of `mcds_counter_map_incr` is
 `MCDS_INVALID_ARGUMENT`; `amount` not UTF-8 is `MCDS_INVALID_UTF8`.

 `m` NULL or live; `field` NULL or `field_len` readable bytes; `amount`
 NULL or NUL-terminated; `out_value` NULL or writable.
 */
mcds_result mcds_counter_map_incr_decimal(const mcds_counter_map *m,
                                          const uint8_t *field,
                                          uintptr_t field_len,
                                          const char *amount,
                                          char **out_value);

/*
 Add `amount` to `field`, taking the double's shortest decimal form
 (`0.1`, not 0.1000000000000000055…) rounded half away from zero to the
 map's scale; the new value as text in `*out_value`, as
 `mcds_counter_map_incr_decimal` gives it (free it with
 `mcds_string_free`). NaN, infinities and amounts past the bounds are
 `MCDS_INVALID_ARGUMENT`.

 `m` NULL or live; `field` NULL or `field_len` readable bytes;
 `out_value` NULL or writable.
 */
mcds_result mcds_counter_map_incr_f64(const mcds_counter_map *m,
                                      const uint8_t *field,
                                      uintptr_t field_len,
                                      double amount,
                                      char **out_value);

/*
 HGET: `field`'s value in units in `*out_value`, 0 if it does not exist.
 One round trip.

 `m` NULL or live; `field` NULL or `field_len` readable bytes;
 `out_value` NULL or writable.
 */
mcds_result mcds_counter_map_get(const mcds_counter_map *m,
                                 const uint8_t *field,
                                 uintptr_t field_len,
                                 int64_t *out_value);

/*
 `mcds_counter_map_get` as decimal text with exactly `scale` places
 (`"0.0"` for a missing field at scale 1), a new NUL-terminated string in
 `*out_value` that the caller owns: free it with `mcds_string_free`.

 `m` NULL or live; `field` NULL or `field_len` readable bytes;
 `out_value` NULL or writable.
 */
mcds_result mcds_counter_map_get_decimal(const mcds_counter_map *m,
                                         const uint8_t *field,
                                         uintptr_t field_len,
                                         char **out_value);

/*
 HGETALL: every field with its value in units, in first-registration
 order, as two parallel lists of the same length: the field names in
 `*out_fields` (read with `mcds_bytes_list_get`) and the values in
 `*out_values` (`mcds_int_list_get` or `mcds_int_list_data`). Both are
 the caller's: free them with `mcds_bytes_list_free` and
 `mcds_int_list_free`. A listed field whose counter is missing (removed
 meanwhile, evicted) is left out. Two round trips (one for an empty
 map); not a snapshot: increments between them may show for some fields.

 `m` NULL or live; `out_fields` and `out_values` NULL or writable.
 */
mcds_result mcds_counter_map_get_all(const mcds_counter_map *m,
                                     mcds_bytes_list **out_fields,
                                     mcds_int_list **out_values);

/*
 `mcds_counter_map_get_all` with the values as decimal text (exactly
 `scale` places, not NUL-terminated: each item has its length), in a
 second `mcds_bytes_list` parallel to the fields. Both lists are the
 caller's: free them with `mcds_bytes_list_free`.

 `m` NULL or live; `out_fields` and `out_values` NULL or writable.
 */
mcds_result mcds_counter_map_get_all_decimal(const mcds_counter_map *m,
                                             mcds_bytes_list **out_fields,
                                             mcds_bytes_list **out_values);

/*
 HKEYS: the registered fields in first-registration order, as a new
 list in `*out` that the caller owns (free it with
 `mcds_bytes_list_free`). A field whose counter is missing is listed. One
 round trip (two when it compacts the registry).

 `m` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_counter_map_fields(const mcds_counter_map *m, mcds_bytes_list **out);

/*
 HLEN: how many fields are registered, in `*out_len`. One round trip.

 `m` NULL or live; `out_len` NULL or writable.
 */
mcds_result mcds_counter_map_len(const mcds_counter_map *m, uintptr_t *out_len);

/*
 Whether no field is registered, in `*out_empty`. One round trip.

 `m` NULL or live; `out_empty` NULL or writable.
 */
mcds_result mcds_counter_map_is_empty(const mcds_counter_map *m, bool *out_empty);

/*
 HDEL: unregister `field`, then delete its counter; in `*out_existed`
 whether its counter existed. Removing a missing field is not an error.
 Two round trips.

 `m` NULL or live; `field` NULL or `field_len` readable bytes;
 `out_existed` NULL or writable.
 */
mcds_result mcds_counter_map_remove(const mcds_counter_map *m,
                                    const uint8_t *field,
                                    uintptr_t field_len,
                                    bool *out_existed);

/*
 Free a counter map (NULL is a no-op).

 `m` must be NULL or a live counter map, not used after this call.
 */
void mcds_counter_map_free(mcds_counter_map *m);

/*
 Create the shadow counter `name` over periods of `period_secs` seconds
 (at least 1), aligned to Unix time: every client must use the same
 period. `*out` is a new handle the caller owns: free it with
 `mcds_shadow_counter_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_shadow_counter_new(const mcds_store *store,
                                    const char *name,
                                    uint32_t period_secs,
                                    mcds_shadow_counter **out);

/*
 Count `delta` events in the current period; the current period's count
 so far in `*out_value`. One round trip, atomic.

 `c` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_shadow_counter_incr(const mcds_shadow_counter *c,
                                     uint64_t delta,
                                     uint64_t *out_value);

/*
 The number of events in the previous (complete) period, in
 `*out_value`: constant for a whole period. One round trip.

 `c` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_shadow_counter_value(const mcds_shadow_counter *c, uint64_t *out_value);

/*
 Free a shadow counter (NULL is a no-op).

 `c` must be NULL or a live counter, not used after this call.
 */
void mcds_shadow_counter_free(mcds_shadow_counter *c);

/*
 Create the view counter `name`; its cached value expires after
 `ttl_secs` seconds (then it is reloaded), or never with 0. `*out` is a
 new handle the caller owns: free it with `mcds_view_counter_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_view_counter_new(const mcds_store *store,
                                  const char *name,
                                  uint32_t ttl_secs,
                                  mcds_view_counter **out);

/*
 Count `delta` views; the new total in `*out_value`. One round trip on a
 hit. On a miss `loader(ctx, …)` is called for the stored total and the
 cache is seeded with total + `delta` by an atomic increment-or-create,
 never a plain set, so two first views at once are both counted (two
 round trips). See `mcds_loader` for the callback's contract;
 `MCDS_NULL_ARGUMENT` if `loader` is NULL, even on a hit.

 `c` NULL or live; `out_value` NULL or writable; `loader` NULL or keeping
 the `mcds_loader` contract with `ctx`.
 */
mcds_result mcds_view_counter_view(const mcds_view_counter *c,
                                   uint64_t delta,
                                   mcds_loader loader,
                                   void *ctx,
                                   uint64_t *out_value);

/*
 The current total, in `*out_value`: the cached value (one round trip),
 or on a miss `loader(ctx, …)`'s, which then seeds the cache if no other
 client did first. See `mcds_loader` for the callback's contract;
 `MCDS_NULL_ARGUMENT` if `loader` is NULL, even on a hit.

 `c` NULL or live; `out_value` NULL or writable; `loader` NULL or keeping
 the `mcds_loader` contract with `ctx`.
 */
mcds_result mcds_view_counter_get(const mcds_view_counter *c,
                                  mcds_loader loader,
                                  void *ctx,
                                  uint64_t *out_value);

/*
 Drop the cached value: the next view or get calls its loader.

 `c` NULL or live.
 */
mcds_result mcds_view_counter_invalidate(const mcds_view_counter *c);

/*
 Free a view counter (NULL is a no-op).

 `c` must be NULL or a live counter, not used after this call.
 */
void mcds_view_counter_free(mcds_view_counter *c);

/*
 Create the lock `name` with a lease of `ttl_secs` seconds (at least 1),
 without fencing tokens or an owner label. `*out` is a new handle the
 caller owns: free it with `mcds_lock_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_lock_new(const mcds_store *store,
                          const char *name,
                          uint32_t ttl_secs,
                          mcds_lock **out);

/*
 Create the lock kept under exactly the memcached key `key` (`key_len`
 bytes, borrowed for the call) with a lease of `ttl_secs` seconds (at
 least 1), for a lock other applications already take with memcached's
 `add`: Symfony Lock's `MemcachedStore`, or any code that adds the key
 with a random value and a TTL to lock and deletes it to unlock. No
 `lock:` naming is added, and neither is a key prefix: the prefix of a
 store handle made with `mcds_store_with_prefix` is NOT applied, so the
 lock is on the same key whichever handle of the store it is made from
 (a prefix the other application uses belongs in `key` itself).

 Both sides exclude each other: whoever added the key first holds it
 until it is deleted or expires, and `mcds_lock_holder` shows the other
 side's value while it does. This handle releases and extends only its
 own lease (by CAS); the other side must likewise never delete a key it
 did not add. With `mcds_lock_with_fencing`, the tokens count in
 `<key>:fence`. On a pool, both sides must place the key on the same
 server (a single server, or the same distribution, such as ketama).

 `key` must be a memcached key: 1 to 250 bytes, none of them a space, a
 control byte or DEL (bytes from 0x80, UTF-8 say, are fine), and leave
 room for the `:fence` suffix (so at most 244 bytes); else
 `MCDS_INVALID_KEY`, the reason in `mcds_last_error_message`. It may be
 NULL only when `key_len` is 0, which is the empty key (invalid).
 `ttl_secs` 0 is `MCDS_INVALID_ARGUMENT`. The handle works as one from
 `mcds_lock_new` (the `mcds_lock_with_…` options included); messages name
 the lock by its key. `store` is unchanged and stays the caller's. `*out`
 is a new handle the caller owns: free it with `mcds_lock_free`.

 `store` NULL or live; `key` NULL or `key_len` readable bytes; `out` NULL
 or writable.
 */
mcds_result mcds_lock_new_with_key(const mcds_store *store,
                                   const uint8_t *key,
                                   uintptr_t key_len,
                                   uint32_t ttl_secs,
                                   mcds_lock **out);

/*
 A new handle on the same lock (same name, TTL and other settings) that
 hands out fencing tokens (`fencing` true) or not: every acquire then
 also increments a counter, strictly increasing per lock name, which
 `mcds_lock_fencing_token` reads. Pass the token to the resource the lock
 protects, which refuses writes carrying a token older than one it has
 seen: that is what keeps a holder that paused past its lease from
 overwriting the next holder's work. Acquiring stays one round trip.

 The new handle holds no lease; `lock` is unchanged. `*out` is a new
 handle the caller owns: free it with `mcds_lock_free`.

 `lock` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_lock_with_fencing(const mcds_lock *lock, bool fencing, mcds_lock **out);

/*
 A new handle on the same lock whose owner tokens name the holder:
 `"<label> <random hex>"`, which `mcds_lock_holder` returns to whoever
 inspects the lock (`mcds lock run` uses `"host=<h> pid=<p>"`). `label`
 (NUL-terminated, borrowed for the call) is at most 200 bytes of
 printable ASCII, spaces included, else `MCDS_INVALID_ARGUMENT`; `""`
 removes the label. The random part keeps tokens unique, so holders with
 the same label never release each other's lease.

 The new handle holds no lease; `lock` is unchanged. `*out` is a new
 handle the caller owns: free it with `mcds_lock_free`.

 `lock` NULL or live; `label` NULL or NUL-terminated; `out` NULL or
 writable.
 */
mcds_result mcds_lock_with_owner_label(const mcds_lock *lock, const char *label, mcds_lock **out);

/*
 A new handle on the same lock whose `mcds_lock_acquire` waits between
 tries a random time under a ceiling that starts at `min_ms` and doubles
 up to `max_ms` (defaults 1 and 50). `1 <= min_ms <= max_ms <= 60000`,
 else `MCDS_INVALID_ARGUMENT`.

 The new handle holds no lease; `lock` is unchanged. `*out` is a new
 handle the caller owns: free it with `mcds_lock_free`.

 `lock` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_lock_with_backoff(const mcds_lock *lock,
                                   uint32_t min_ms,
                                   uint32_t max_ms,
                                   mcds_lock **out);

/*
 Take the lock if it is free: `*out_acquired` is true if this handle now
 holds it, false if another owner does. One round trip (with fencing
 too). `MCDS_INVALID_ARGUMENT` if this handle already holds a lease that
 is not known to be lost (a lost one is simply replaced).

 `lock` NULL or live; `out_acquired` NULL or writable.
 */
mcds_result mcds_lock_try_acquire(const mcds_lock *lock, bool *out_acquired);

/*
 Wait up to `timeout_ms` for the lock. `MCDS_WAIT_TIMEOUT` if it stayed
 taken. `MCDS_INVALID_ARGUMENT` if this handle already holds a lease that
 is not known to be lost. Other calls on this handle wait meanwhile.

 `lock` NULL or live.
 */
mcds_result mcds_lock_acquire(const mcds_lock *lock, uint32_t timeout_ms);

/*
 Release the lock this handle holds. `*out_released` is true if it was
 still ours, false if the lease had been lost (another owner may hold it
 now; it was not touched). `MCDS_INVALID_ARGUMENT` if the handle holds
 nothing. On any other error (a timeout, a server down, no reply) the
 handle still holds the guard: call `mcds_lock_release` again to retry.
 Stops an auto-extension.

 `lock` NULL or live; `out_released` NULL or writable.
 */
mcds_result mcds_lock_release(const mcds_lock *lock, bool *out_released);

/*
 Renew the lease this handle holds for `ttl_secs` seconds (at least 1)
 from now, if it is still ours: `*out_extended` is true if it was, false
 if the lease had been lost (expired, evicted, taken by another owner;
 nothing was touched, and `mcds_lock_is_lost` now says true). One round
 trip. `MCDS_INVALID_ARGUMENT` if the handle holds nothing or `ttl_secs`
 is 0. An error such as `MCDS_AMBIGUOUS` can be retried: a renewal that
 was applied unseen is recognised by the next one.

 `lock` NULL or live; `out_extended` NULL or writable.
 */
mcds_result mcds_lock_extend(const mcds_lock *lock, uint32_t ttl_secs, bool *out_extended);

/*
 Renew the lease this handle holds in the background, every
 `ttl_secs / 3`, for `ttl_secs` (at least 1) each time, until it is
 released (`mcds_lock_release`, `mcds_lock_free`) or found lost. Poll
 `mcds_lock_is_lost` from the work loop: it turns true when a renewal
 finds the lease gone, or when renewals keep failing and the next would
 come after the lease ends (about `ttl_secs / 3` before another client
 can take the lock: time to stop the work). Calling it again replaces
 the renewer. The renewer is a thread of libmcds that never calls into
 the caller's code. `MCDS_INVALID_ARGUMENT` if the handle holds nothing
 or `ttl_secs` is 0.

 `lock` NULL or live.
 */
mcds_result mcds_lock_auto_extend(const mcds_lock *lock, uint32_t ttl_secs);

/*
 Whether the lease this handle holds is known to be lost, in
 `*out_lost`: found so by `mcds_lock_extend`, the auto-extension or a
 release. No round trip: false means no call has found it lost yet.
 `MCDS_INVALID_ARGUMENT` if the handle holds nothing (after a release,
 say).

 `lock` NULL or live; `out_lost` NULL or writable.
 */
mcds_result mcds_lock_is_lost(const mcds_lock *lock, bool *out_lost);

/*
 The fencing token of the lease this handle holds, in `*out_token`:
 strictly greater than every token handed out before for this lock name
 while its counter lives (see the Rust `mcds_lock` docs for when it is
 recreated). `MCDS_INVALID_ARGUMENT` if the handle holds nothing or was
 not made with `mcds_lock_with_fencing(…, true, …)`.

 `lock` NULL or live; `out_token` NULL or writable.
 */
mcds_result mcds_lock_fencing_token(const mcds_lock *lock, uint64_t *out_token);

/*
 The owner token of the lease this handle holds (what the lock item
 stores: `"<label> <random hex>"` or just the random hex), as a new
 NUL-terminated string in `*out_token` that the caller owns: free it with
 `mcds_string_free`. `MCDS_INVALID_ARGUMENT` if the handle holds nothing.

 `lock` NULL or live; `out_token` NULL or writable.
 */
mcds_result mcds_lock_owner_token(const mcds_lock *lock, char **out_token);

/*
 Who holds the lock now, whichever handle or process it is: the holder's
 owner token as a new NUL-terminated string in `*out_holder` that the
 caller owns (free it with `mcds_string_free`), or NULL if the lock is
 free. One round trip. Bytes that are not UTF-8 (written by another
 program) come back as U+FFFD, a NUL byte as the two characters `\0`.

 `lock` NULL or live; `out_holder` NULL or writable.
 */
mcds_result mcds_lock_holder(const mcds_lock *lock, char **out_holder);

/*
 Free a lock handle (NULL is a no-op), stopping its auto-extension and
 releasing a lease it still holds (best effort: errors are ignored; call
 `mcds_lock_release` first to learn the outcome).

 `lock` must be NULL or a live lock, not used after this call.
 */
void mcds_lock_free(mcds_lock *lock);

/*
 Create the set `name` on `store`. `*out` is a new handle the caller
 owns: free it with `mcds_set_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_set_new(const mcds_store *store, const char *name, mcds_set **out);

/*
 A new handle on the same set (same name and settings) that gives the
 set's item a TTL of `ttl_secs` seconds when it creates it, and again
 when it compacts it (an add to an existing set leaves its expiry
 alone). 0 means never expires, as memcached's exptime 0 (and as
 `mcds_set_new`).

 memcached reads an exptime over 30 days (2 592 000 s) as an absolute
 Unix time; mcds converts, so `ttl_secs` always means seconds from the
 write (40 days is 40 days), capped at the last time memcached can parse
 (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
 whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
 seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).

 `s` is unchanged and borrowed for the call. `*out` is a new handle the
 caller owns: free it with `mcds_set_free`.

 `s` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_set_with_ttl(const mcds_set *s, uint32_t ttl_secs, mcds_set **out);

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
 Add `count` members in one append (one round trip, whatever the count):
 member `i` is the `lens[i]` bytes at `members[i]` (any bytes; NULL is
 allowed when `lens[i]` is 0). Both arrays are borrowed for the call and
 may be NULL when `count` is 0, which does nothing. At most 1 000 000
 members per call (`MCDS_INVALID_ARGUMENT`); a NULL array or member with
 a non-zero length is `MCDS_NULL_ARGUMENT`, and nothing is written.

 `s` NULL or live; `members` and `lens` NULL or `count` readable values;
 each `members[i]` NULL or `lens[i]` readable bytes.
 */
mcds_result mcds_set_add_many(const mcds_set *s,
                              const uint8_t *const *members,
                              const uintptr_t *lens,
                              uintptr_t count);

/*
 Remove `count` members in one append; the arrays as for
 `mcds_set_add_many`. A missing set stays missing.

 `s` NULL or live; `members` and `lens` NULL or `count` readable values;
 each `members[i]` NULL or `lens[i]` readable bytes.
 */
mcds_result mcds_set_remove_many(const mcds_set *s,
                                 const uint8_t *const *members,
                                 const uintptr_t *lens,
                                 uintptr_t count);

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
 Rewrite the set's log without the tokens of removed members, if it has
 any, by CAS: `*out_rewritten` is true if it was rewritten, false if there
 was nothing to do or a concurrent write won (nothing is lost either
 way). `mcds_set_members` also compacts when much of the log is dead.
 One round trip (two when rewriting).

 `s` NULL or live; `out_rewritten` NULL or writable.
 */
mcds_result mcds_set_compact(const mcds_set *s, bool *out_rewritten);

/*
 Delete the set (every member). One round trip.

 `s` NULL or live.
 */
mcds_result mcds_set_clear(const mcds_set *s);

/*
 Free a set (NULL is a no-op).

 `s` must be NULL or a live set, not used after this call.
 */
void mcds_set_free(mcds_set *s);

/*
 Create the sharded set `name` over `shards` items (1 to 4096; every
 client must use the same number). `*out` is a new handle the caller
 owns: free it with `mcds_sharded_set_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_sharded_set_new(const mcds_store *store,
                                 const char *name,
                                 uint32_t shards,
                                 mcds_sharded_set **out);

/*
 Add the member of `len` bytes at `member` (any bytes; NULL is allowed
 when `len` is 0). One round trip.

 `s` NULL or live; `member` NULL or `len` readable bytes.
 */
mcds_result mcds_sharded_set_add(const mcds_sharded_set *s, const uint8_t *member, uintptr_t len);

/*
 Remove a member. One round trip.

 `s` NULL or live; `member` NULL or `len` readable bytes.
 */
mcds_result mcds_sharded_set_remove(const mcds_sharded_set *s,
                                    const uint8_t *member,
                                    uintptr_t len);

/*
 Add `count` members: one append per shard touched, all in one pipelined
 batch (one round trip per server). The arrays as for
 `mcds_set_add_many` (borrowed for the call; NULL when `count` is 0; at
 most 1 000 000 members).

 On a pool, the shards on different servers are written independently:
 on an error (even `MCDS_IO` or `MCDS_SERVER_DOWN`, which say that
 server's requests were not applied) the shards on other servers may be
 written already. Adding is idempotent, so retry the whole call.

 `s` NULL or live; `members` and `lens` NULL or `count` readable values;
 each `members[i]` NULL or `lens[i]` readable bytes.
 */
mcds_result mcds_sharded_set_add_many(const mcds_sharded_set *s,
                                      const uint8_t *const *members,
                                      const uintptr_t *lens,
                                      uintptr_t count);

/*
 Remove `count` members, as `mcds_sharded_set_add_many` adds them (and,
 on an error, as partially: the shards on other servers may be written
 already; removing is idempotent, so retry the whole call).

 `s` NULL or live; `members` and `lens` NULL or `count` readable values;
 each `members[i]` NULL or `lens[i]` readable bytes.
 */
mcds_result mcds_sharded_set_remove_many(const mcds_sharded_set *s,
                                         const uint8_t *const *members,
                                         const uintptr_t *lens,
                                         uintptr_t count);

/*
 Whether the set contains the member, in `*out`. Reads one shard.

 `s` NULL or live; `member` NULL or `len` readable bytes; `out` NULL or writable.
 */
mcds_result mcds_sharded_set_contains(const mcds_sharded_set *s,
                                      const uint8_t *member,
                                      uintptr_t len,
                                      bool *out);

/*
 Every member, shard by shard (each in first-insertion order), as a new
 list in `*out` that the caller owns: free it with `mcds_bytes_list_free`.
 One round trip per server.

 `s` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_sharded_set_members(const mcds_sharded_set *s, mcds_bytes_list **out);

/*
 Compact every shard whose log holds tokens of removed members (by CAS:
 a concurrent write is never lost). A round trip per shard, two for each
 shard rewritten.

 `s` NULL or live.
 */
mcds_result mcds_sharded_set_compact(const mcds_sharded_set *s);

/*
 Delete every shard: one pipelined batch (one round trip per server); on
 an error the shards on other servers may be deleted already.

 `s` NULL or live.
 */
mcds_result mcds_sharded_set_clear(const mcds_sharded_set *s);

/*
 Free a sharded set (NULL is a no-op).

 `s` must be NULL or a live set, not used after this call.
 */
void mcds_sharded_set_free(mcds_sharded_set *s);

/*
 Create the integer array `name`. `*out` is a new handle the caller owns:
 free it with `mcds_int_array_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_int_array_new(const mcds_store *store, const char *name, mcds_int_array **out);

/*
 Add the `count` values at `values` (borrowed for the call; NULL when
 `count` is 0, which does nothing; at most 1 000 000). One append.

 `a` NULL or live; `values` NULL or `count` readable values.
 */
mcds_result mcds_int_array_add(const mcds_int_array *a, const int64_t *values, uintptr_t count);

/*
 Remove the `count` values at `values`, as `mcds_int_array_add` adds
 them. One append; a missing array stays missing.

 `a` NULL or live; `values` NULL or `count` readable values.
 */
mcds_result mcds_int_array_remove(const mcds_int_array *a, const int64_t *values, uintptr_t count);

/*
 Whether `value` is present, in `*out`. One round trip.

 `a` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_int_array_contains(const mcds_int_array *a, int64_t value, bool *out);

/*
 The values in first-insertion order, as a new list in `*out` that the
 caller owns: free it with `mcds_int_list_free`. `MCDS_CORRUPT` if a
 member is not a decimal integer (another program wrote the key). One
 round trip.

 `a` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_int_array_members(const mcds_int_array *a, mcds_int_list **out);

/*
 Delete the array (every value). One round trip.

 `a` NULL or live.
 */
mcds_result mcds_int_array_clear(const mcds_int_array *a);

/*
 Free an integer array (NULL is a no-op).

 `a` must be NULL or a live array, not used after this call.
 */
void mcds_int_array_free(mcds_int_array *a);

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
 The number of values in `list`, in `*out_len`.

 `list` NULL or live; `out_len` NULL or writable.
 */
mcds_result mcds_int_list_len(const mcds_int_list *list, uintptr_t *out_len);

/*
 Value `index` of `list`, in `*out_value`. `MCDS_INVALID_ARGUMENT` if
 `index` is out of range.

 `list` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_int_list_get(const mcds_int_list *list, uintptr_t index, int64_t *out_value);

/*
 Every value at once: a pointer to `*out_len` consecutive `int64_t`s in
 `*out_data`, owned by the list and valid until it is freed. With a
 length of 0 the pointer is not NULL but must not be read.

 `list` NULL or live; `out_data` and `out_len` NULL or writable.
 */
mcds_result mcds_int_list_data(const mcds_int_list *list,
                               const int64_t **out_data,
                               uintptr_t *out_len);

/*
 Free an integer list (NULL is a no-op).

 `list` must be NULL or a live list, not used after this call.
 */
void mcds_int_list_free(mcds_int_list *list);

/*
 Free a string that mcds handed to the caller (`mcds_lock_holder`,
 `mcds_lock_owner_token`); NULL is a no-op. Never pass it other strings,
 and never free these with `free()`.

 `s` must be NULL or a string from mcds not yet freed, not used after
 this call.
 */
void mcds_string_free(char *s);

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
 The number of buckets in `list`, in `*out_len`.

 `list` NULL or live; `out_len` NULL or writable.
 */
mcds_result mcds_bucket_list_len(const mcds_bucket_list *list, uintptr_t *out_len);

/*
 Bucket `index` of `list` (its start and aggregates, copied) in `*out`.
 `MCDS_INVALID_ARGUMENT` if `index` is out of range.

 `list` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_bucket_list_get(const mcds_bucket_list *list, uintptr_t index, mcds_bucket *out);

/*
 Free a bucket list (NULL is a no-op).

 `list` must be NULL or a live list, not used after this call.
 */
void mcds_bucket_list_free(mcds_bucket_list *list);

/*
 The number of slots in `list`, in `*out_len`.

 `list` NULL or live; `out_len` NULL or writable.
 */
mcds_result mcds_slot_list_len(const mcds_slot_list *list, uintptr_t *out_len);

/*
 Slot `index` of `list` (its start and count, copied) in `*out`.
 `MCDS_INVALID_ARGUMENT` if `index` is out of range.

 `list` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_slot_list_get(const mcds_slot_list *list, uintptr_t index, mcds_slot *out);

/*
 Free a slot list (NULL is a no-op).

 `list` must be NULL or a live list, not used after this call.
 */
void mcds_slot_list_free(mcds_slot_list *list);

/*
 Create the window counter `name` with `slots` slots (2 to 1000) of
 `slot_secs` seconds. `*out` is a new handle the caller owns: free it
 with `mcds_window_free`.

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
 sliding-window estimate. `*out` is a new handle the caller owns: free
 it with `mcds_limiter_free`.

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
 seconds; it keeps `(chunks - 1) * chunk_secs` seconds of events. `*out`
 is a new handle the caller owns: free it with `mcds_log_free`.

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
 Record an event with timestamp `at_ms` (Unix ms) and `len` payload
 bytes: a late event, or one imported from elsewhere. `at_ms` must lie in
 the current chunk or the log's capacity before it, else
 `MCDS_INVALID_ARGUMENT`. One round trip.

 `l` NULL or live; `payload` NULL or `len` readable bytes.
 */
mcds_result mcds_log_put_at(const mcds_log *l,
                            uint64_t at_ms,
                            const uint8_t *payload,
                            uintptr_t len);

/*
 The events with `first_ms <= at <= last_ms` within capacity, in time
 order, as a new list in `*out` that the caller owns: free it with
 `mcds_event_list_free`.

 `l` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_log_fetch(const mcds_log *l,
                           uint64_t first_ms,
                           uint64_t last_ms,
                           mcds_event_list **out);

/*
 The events after `*cursor` (up to now, in time order) as a new list in
 `*out` that the caller owns (free it with `mcds_event_list_free`), and
 in `*out_next` the cursor to poll with next (`*cursor` itself when
 nothing is new). `cursor` and `out_next` may point to the same struct,
 so a polling loop is `mcds_log_since(log, &cur, &events, &cur)`. Events
 that arrive later with a timestamp before the cursor are not seen. One
 round trip per server. `MCDS_INVALID_ARGUMENT` if `seen_at_ms` does not
 fit a `size_t`.

 `l` NULL or live; `cursor` NULL or readable; `out` and `out_next` NULL or
 writable.
 */
mcds_result mcds_log_since(const mcds_log *l,
                           const mcds_cursor *cursor,
                           mcds_event_list **out,
                           mcds_cursor *out_next);

/*
 Free an event log (NULL is a no-op).

 `l` must be NULL or a live log, not used after this call.
 */
void mcds_log_free(mcds_log *l);

/*
 Create the table `name`. `*out` is a new handle the caller owns: free
 it with `mcds_table_free`.

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
 The members in insertion order, as a new list in `*out` that the caller
 owns: free it with `mcds_bytes_list_free`.

 `t` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_table_keys(const mcds_table *t, mcds_bytes_list **out);

/*
 Every member with its value, as two new lists of the same length that
 the caller owns (free each with `mcds_bytes_list_free`): item `i` of
 `*out_members` has the value item `i` of `*out_values`. Members in
 insertion order; a member whose value item is gone (evicted, expired) is
 left out of both. One round trip for the members, one per server for the
 values. Both outputs are written on success only, and neither on
 failure.

 `t` NULL or live; `out_members` and `out_values` NULL or writable.
 */
mcds_result mcds_table_entries(const mcds_table *t,
                               mcds_bytes_list **out_members,
                               mcds_bytes_list **out_values);

/*
 Free a table (NULL is a no-op).

 `t` must be NULL or a live table, not used after this call.
 */
void mcds_table_free(mcds_table *t);

/*
 Create the HyperLogLog `name` on `store`. `*out` is a new handle the
 caller owns: free it with `mcds_hll_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_hll_new(const mcds_store *store, const char *name, mcds_hll **out);

/*
 A new handle on the same HyperLogLog whose writes (add, merge) give
 its item a TTL of `ttl_secs` seconds, counted again from each write
 that changes it. 0 means never expires, as memcached's exptime 0 (and
 as `mcds_hll_new`).

 memcached reads an exptime over 30 days (2 592 000 s) as an absolute
 Unix time; mcds converts, so `ttl_secs` always means seconds from the
 write (40 days is 40 days), capped at the last time memcached can parse
 (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
 whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
 seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).

 The new handle is on the same store as `h` (for `mcds_hll_merge` and
 `mcds_hll_count_union`). `h` is unchanged and borrowed for the call.
 `*out` is a new handle the caller owns: free it with `mcds_hll_free`.

 `h` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_hll_with_ttl(const mcds_hll *h, uint32_t ttl_secs, mcds_hll **out);

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
 PFADD of `count` elements in one read-modify-write; in `*out_changed`
 whether the estimate may have changed (some register changed). Two
 round trips, one when nothing changes, whatever the count. Element `i`
 is the `lens[i]` bytes at `elements[i]` (any bytes; NULL is allowed
 when `lens[i]` is 0). Both arrays are borrowed for the call and may be
 NULL when `count` is 0 (nothing is added: `*out_changed` is false). At
 most 1 000 000 elements per call (`MCDS_INVALID_ARGUMENT`); a NULL
 array or element with a non-zero length is `MCDS_NULL_ARGUMENT`, and
 nothing is written.

 `h` NULL or live; `elements` and `lens` NULL or `count` readable values;
 each `elements[i]` NULL or `lens[i]` readable bytes; `out_changed` NULL
 or writable.
 */
mcds_result mcds_hll_add_many(const mcds_hll *h,
                              const uint8_t *const *elements,
                              const uintptr_t *lens,
                              uintptr_t count,
                              bool *out_changed);

/*
 PFCOUNT: the estimated number of distinct elements, in `*out`. One round
 trip.

 `h` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_hll_count(const mcds_hll *h, uint64_t *out);

/*
 PFMERGE: write the union of `target` and the `count` sketches at
 `sources` into `target`. The array is borrowed for the call and may be
 NULL when `count` is 0; at most 100 000 sketches. The sources must all
 come from one store handle (or handles made from it with
 `mcds_store_with_prefix`), else `MCDS_INVALID_ARGUMENT`; `target` may be
 on another store.

 `target` NULL or live; `sources` NULL or `count` readable pointers, each
 NULL or live.
 */
mcds_result mcds_hll_merge(const mcds_hll *target, const mcds_hll *const *sources, uintptr_t count);

/*
 PFCOUNT of several keys: the estimated number of distinct elements in
 the union of the `count` sketches at `sketches`, in `*out`, without
 writing anything. One round trip per server. The array is borrowed for
 the call and may be NULL when `count` is 0 (the union is then empty: 0);
 at most 100 000 sketches, all from one store handle (or handles made
 from it with `mcds_store_with_prefix`), else `MCDS_INVALID_ARGUMENT`.

 `sketches` NULL or `count` readable pointers, each NULL or live; `out`
 NULL or writable.
 */
mcds_result mcds_hll_count_union(const mcds_hll *const *sketches, uintptr_t count, uint64_t *out);

/*
 Delete the sketch: it counts 0 again. One round trip; clearing a
 missing sketch is not an error.

 `h` NULL or live.
 */
mcds_result mcds_hll_clear(const mcds_hll *h);

/*
 Free a HyperLogLog handle (NULL is a no-op).

 `h` must be NULL or a live handle, not used after this call.
 */
void mcds_hll_free(mcds_hll *h);

/*
 Create the Bloom filter `name` for `expected_items` at
 `false_positive_rate` (between 0 and 1, e.g. 0.01). Every client must
 use the same two numbers. `*out` is a new handle the caller owns: free
 it with `mcds_bloom_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_bloom_new(const mcds_store *store,
                           const char *name,
                           uint64_t expected_items,
                           double false_positive_rate,
                           mcds_bloom **out);

/*
 A new handle on the same Bloom filter (same name and shape) whose adds
 give each block they write a TTL of `ttl_secs` seconds, counted again
 from each write of that block. 0 means never expires, as memcached's
 exptime 0 (and as `mcds_bloom_new`).

 memcached reads an exptime over 30 days (2 592 000 s) as an absolute
 Unix time; mcds converts, so `ttl_secs` always means seconds from the
 write (40 days is 40 days), capped at the last time memcached can parse
 (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
 whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
 seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).

 `b` is unchanged and borrowed for the call. `*out` is a new handle the
 caller owns: free it with `mcds_bloom_free`.

 `b` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_bloom_with_ttl(const mcds_bloom *b, uint32_t ttl_secs, mcds_bloom **out);

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
 Add `count` elements: one read of the blocks they fall in and one
 pipelined batch of CAS writes (a block another client changed meanwhile
 is redone by itself). In `*out_added` how many elements were new (some
 bit was clear when their turn came): what `mcds_bloom_add` would have
 said for each in order, summed, so an element given twice counts at
 most once. Element `i` is the `lens[i]` bytes at `elements[i]` (any
 bytes; NULL is allowed when `lens[i]` is 0). Both arrays are borrowed
 for the call and may be NULL when `count` is 0 (`*out_added` is 0). At
 most 1 000 000 elements per call (`MCDS_INVALID_ARGUMENT`); a NULL
 array or element with a non-zero length is `MCDS_NULL_ARGUMENT`, and
 nothing is written. On an error after the reads, some blocks may have
 been written (a filter only gains bits) and `*out_added` is not.

 `b` NULL or live; `elements` and `lens` NULL or `count` readable values;
 each `elements[i]` NULL or `lens[i]` readable bytes; `out_added` NULL or
 writable.
 */
mcds_result mcds_bloom_add_many(const mcds_bloom *b,
                                const uint8_t *const *elements,
                                const uintptr_t *lens,
                                uintptr_t count,
                                uintptr_t *out_added);

/*
 Whether each of `count` elements may have been added, as
 `mcds_bloom_contains` says: `out_contained[i]` for element `i`. One read
 of the blocks they fall in (one round trip per server). The elements as
 for `mcds_bloom_add_many`; `out_contained` is the caller's array of
 `count` slots, written only on success. All three arrays may be NULL
 when `count` is 0.

 `b` NULL or live; `elements` and `lens` NULL or `count` readable values;
 each `elements[i]` NULL or `lens[i]` readable bytes; `out_contained`
 NULL or `count` writable slots.
 */
mcds_result mcds_bloom_contains_many(const mcds_bloom *b,
                                     const uint8_t *const *elements,
                                     const uintptr_t *lens,
                                     uintptr_t count,
                                     bool *out_contained);

/*
 Delete every block: the filter is empty again. One pipelined batch of
 deletes (one round trip per server); on an error some blocks may be
 deleted already.

 `b` NULL or live.
 */
mcds_result mcds_bloom_clear(const mcds_bloom *b);

/*
 Free a Bloom filter handle (NULL is a no-op).

 `b` must be NULL or a live handle, not used after this call.
 */
void mcds_bloom_free(mcds_bloom *b);

/*
 Create the bitmap `name` whose bit 0 is the unit starting at
 `start_unix_secs`, one bit per `unit_ms` milliseconds (at least 1).
 `*out` is a new handle the caller owns: free it with `mcds_bitmap_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_bitmap_new(const mcds_store *store,
                            const char *name,
                            uint64_t start_unix_secs,
                            uint64_t unit_ms,
                            mcds_bitmap **out);

/*
 A new handle on the same bitmap (same name, start and unit) whose
 writes give each segment they write a TTL of `ttl_secs` seconds, counted
 again from each write of that segment. 0 means never expires, as
 memcached's exptime 0 (and as `mcds_bitmap_new`).

 memcached reads an exptime over 30 days (2 592 000 s) as an absolute
 Unix time; mcds converts, so `ttl_secs` always means seconds from the
 write (40 days is 40 days), capped at the last time memcached can parse
 (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
 whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
 seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).

 `b` is unchanged and borrowed for the call. `*out` is a new handle the
 caller owns: free it with `mcds_bitmap_free`.

 `b` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_bitmap_with_ttl(const mcds_bitmap *b, uint32_t ttl_secs, mcds_bitmap **out);

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

/*
 Create the time series `name`, recording at each of the `count`
 resolutions at `resolutions` (1 to 8, distinct steps; the array is
 borrowed for the call). Every process recording into or reading the
 series must give the same resolutions. `MCDS_INVALID_ARGUMENT` for no
 resolution or more than 8, a step or retention of 0 ms or beyond 100
 years, a retention shorter than its step, or a step given twice;
 `MCDS_INVALID_KEY` if the name makes a bad key. `*out` is a new handle
 the caller owns: free it with `mcds_timeseries_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `resolutions` NULL
 or `count` readable structs; `out` NULL or writable.
 */
mcds_result mcds_timeseries_new(const mcds_store *store,
                                const char *name,
                                const mcds_resolution *resolutions,
                                uintptr_t count,
                                mcds_timeseries **out);

/*
 A handle on the same series whose reads ask the store whether it lost
 items since the buckets they return could first be written (`check`
 true, the default) or not (false: a read may then return a bucket
 short of samples, or none for one that had some, without an error —
 for a store that cannot tell, or samples imported into a server from
 before it started). See the Rust `TimeSeries` docs, "Reads, and lost
 data". `ts` is unchanged and borrowed for the call. `*out` is a new
 handle the caller owns: free it with `mcds_timeseries_free`.

 `ts` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_timeseries_with_loss_check(const mcds_timeseries *ts,
                                            bool check,
                                            mcds_timeseries **out);

/*
 A handle on the same series with `skew_ms` as the most the clocks of
 its clients differ by (default 60 000): a sample may lie at most this
 far ahead of the recording client's clock (`MCDS_INVALID_ARGUMENT`
 otherwise), and a read vouches for a bucket only if it starts twice
 this long after its server's last loss. `ts` is unchanged and borrowed
 for the call. `*out` is a new handle the caller owns: free it with
 `mcds_timeseries_free`.

 `ts` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_timeseries_with_max_clock_skew(const mcds_timeseries *ts,
                                                uint64_t skew_ms,
                                                mcds_timeseries **out);

/*
 The series' name, as a new NUL-terminated string in `*out_name` that
 the caller owns: free it with `mcds_string_free`.

 `ts` NULL or live; `out_name` NULL or writable.
 */
mcds_result mcds_timeseries_name(const mcds_timeseries *ts, char **out_name);

/*
 The series' resolutions, finest first: written to the first of the
 `capacity` structs at `out` (8 always suffice), their number in
 `*out_len`. `MCDS_INVALID_ARGUMENT` (nothing written) if `capacity` is
 below that number.

 `ts` NULL or live; `out` NULL or `capacity` writable structs; `out_len`
 NULL or writable.
 */
mcds_result mcds_timeseries_resolutions(const mcds_timeseries *ts,
                                        mcds_resolution *out,
                                        uintptr_t capacity,
                                        uintptr_t *out_len);

/*
 Record `value` at `ts_ms` (Unix ms, at most the clock skew — 60 s by
 default — ahead of the system clock, else `MCDS_INVALID_ARGUMENT`) at
 every resolution whose bucket is still within retention (none is not
 an error: nothing is written). Each bucket is one item, changed by CAS:
 2 round trips per server, 2 more per lost CAS race (up to 64 attempts,
 then `MCDS_CONFLICT`). `MCDS_UNSUPPORTED` on a store without CAS
 (memcached `-C`, a proxy). A failure wrote nothing, or is
 `MCDS_AMBIGUOUS` when some resolutions took the sample: see the Rust
 `TimeSeries` docs.

 `ts` NULL or live.
 */
mcds_result mcds_timeseries_record(const mcds_timeseries *ts, uint64_t ts_ms, int64_t value);

/*
 Record `value` now, by the system clock (as `mcds_timeseries_record`).

 `ts` NULL or live.
 */
mcds_result mcds_timeseries_record_now(const mcds_timeseries *ts, int64_t value);

/*
 The non-empty buckets of resolution `step_ms` (one of the series'
 steps, else `MCDS_INVALID_ARGUMENT`) from the one containing `from_ms`
 to the one containing `to_ms` (Unix ms, inclusive), oldest first, as a
 new list in `*out` that the caller owns: free it with
 `mcds_bucket_list_free`. Buckets past retention are not read; `from_ms`
 after `to_ms` gives an empty list. At most 10 000 buckets within
 retention, else `MCDS_INVALID_ARGUMENT`. `MCDS_LOST` for a bucket
 whose server lost items (a restart, flush or eviction) since it could
 first be written, so that it may be short or missing (see
 `mcds_timeseries_with_loss_check`); `MCDS_CORRUPT` for bytes no record
 wrote;
 `MCDS_UNSUPPORTED` through a store that cannot say whether it lost
 items (a proxy). One round trip per server for the buckets, then two
 more per server (memcached's `stats` and its loss record) for the loss
 check.

 `ts` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_timeseries_range(const mcds_timeseries *ts,
                                  uint64_t from_ms,
                                  uint64_t to_ms,
                                  uint64_t step_ms,
                                  mcds_bucket_list **out);

/*
 The aggregates of every sample in the range (as in
 `mcds_timeseries_range`, one read) in `*out_value`, and whether there
 is any in `*out_found` (when none, `*out_value` is all zeros). The sum
 is exact, in two halves (`mcds_i128`).

 `ts` NULL or live; `out_found` and `out_value` NULL or writable.
 */
mcds_result mcds_timeseries_aggregate(const mcds_timeseries *ts,
                                      uint64_t from_ms,
                                      uint64_t to_ms,
                                      uint64_t step_ms,
                                      bool *out_found,
                                      mcds_stats *out_value);

/*
 How many samples the range holds (as in `mcds_timeseries_range`), in
 `*out_count`.

 `ts` NULL or live; `out_count` NULL or writable.
 */
mcds_result mcds_timeseries_count(const mcds_timeseries *ts,
                                  uint64_t from_ms,
                                  uint64_t to_ms,
                                  uint64_t step_ms,
                                  uint64_t *out_count);

/*
 The exact sum of the range's samples (0 when none; as in
 `mcds_timeseries_range`), in `*out_sum`: two halves, never truncated
 (see `mcds_i128` for rebuilding it).

 `ts` NULL or live; `out_sum` NULL or writable.
 */
mcds_result mcds_timeseries_sum(const mcds_timeseries *ts,
                                uint64_t from_ms,
                                uint64_t to_ms,
                                uint64_t step_ms,
                                mcds_i128 *out_sum);

/*
 The mean of the range's samples (the sum rounded to a `double`, over the
 count: as Rust's `Stats::avg`, so within an ulp of the exact mean) in `*out_value`, and whether there is any sample in
 `*out_found` (when none, `*out_value` is 0).

 `ts` NULL or live; `out_found` and `out_value` NULL or writable.
 */
mcds_result mcds_timeseries_avg(const mcds_timeseries *ts,
                                uint64_t from_ms,
                                uint64_t to_ms,
                                uint64_t step_ms,
                                bool *out_found,
                                double *out_value);

/*
 The smallest sample of the range in `*out_value`, and whether there is
 any in `*out_found` (when none, `*out_value` is 0).

 `ts` NULL or live; `out_found` and `out_value` NULL or writable.
 */
mcds_result mcds_timeseries_min(const mcds_timeseries *ts,
                                uint64_t from_ms,
                                uint64_t to_ms,
                                uint64_t step_ms,
                                bool *out_found,
                                int64_t *out_value);

/*
 The largest sample of the range in `*out_value`, and whether there is
 any in `*out_found` (when none, `*out_value` is 0).

 `ts` NULL or live; `out_found` and `out_value` NULL or writable.
 */
mcds_result mcds_timeseries_max(const mcds_timeseries *ts,
                                uint64_t from_ms,
                                uint64_t to_ms,
                                uint64_t step_ms,
                                bool *out_found,
                                int64_t *out_value);

/*
 The buckets of resolution `step_ms` where *any* of the `count` series at
 `series` has samples, each the merge of their samples there (counts and
 sums add, min and max widen), oldest first, as a new list in `*out` that
 the caller owns: free it with `mcds_bucket_list_free`. The series must
 all be made from one store handle (or handles made from it with
 `mcds_store_with_prefix`) and record at `step_ms`, else
 `MCDS_INVALID_ARGUMENT`; they are read in one round trip per server,
 then checked for lost data as in `mcds_timeseries_range`.
 The array is borrowed for the call and may be NULL when `count` is 0
 (an empty list).

 `series` NULL or `count` readable pointers, each NULL or live; `out`
 NULL or writable.
 */
mcds_result mcds_timeseries_union(const mcds_timeseries *const *series,
                                  uintptr_t count,
                                  uint64_t from_ms,
                                  uint64_t to_ms,
                                  uint64_t step_ms,
                                  mcds_bucket_list **out);

/*
 The buckets where *every* one of the `count` series at `series` has
 samples, each the merge of their samples there; otherwise as
 `mcds_timeseries_union` (no series gives an empty list).

 `series` NULL or `count` readable pointers, each NULL or live; `out`
 NULL or writable.
 */
mcds_result mcds_timeseries_intersection(const mcds_timeseries *const *series,
                                         uintptr_t count,
                                         uint64_t from_ms,
                                         uint64_t to_ms,
                                         uint64_t step_ms,
                                         mcds_bucket_list **out);

/*
 Free a time series handle (NULL is a no-op); the data stays in the store.

 `ts` must be NULL or a live time series, not used after this call.
 */
void mcds_timeseries_free(mcds_timeseries *ts);

/*
 Create the packed series `name`: slots of `slot_ms` (whole ms, at least
 1), `slots_per_period` (1 to 65 536) of them per item, each
 `width_bytes` wide (1, 2 or 4: counts saturate at 255, 65 535 or
 4 294 967 295), readable for `retention_ms` (at least one period, at
 most 100 years) after their period ends. `MCDS_INVALID_ARGUMENT` for
 any of these out of range; `MCDS_VALUE_TOO_LARGE` if a period's item
 would not fit the store's item size limit (use fewer slots per period);
 `MCDS_INVALID_KEY` if the name makes a bad key. `*out` is a new handle
 the caller owns: free it with `mcds_packed_series_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_packed_series_new(const mcds_store *store,
                                   const char *name,
                                   uint64_t slot_ms,
                                   uintptr_t slots_per_period,
                                   uint32_t width_bytes,
                                   uint64_t retention_ms,
                                   mcds_packed_series **out);

/*
 A handle on the same packed series whose reads ask the store whether
 it lost items (`check` true, the default) or not: as
 `mcds_timeseries_with_loss_check`. `ps` is unchanged and borrowed for
 the call. `*out` is a new handle the caller owns: free it with
 `mcds_packed_series_free`.

 `ps` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_packed_series_with_loss_check(const mcds_packed_series *ps,
                                               bool check,
                                               mcds_packed_series **out);

/*
 A handle on the same packed series with `skew_ms` as the most the
 clocks of its clients differ by (default 60 000): as
 `mcds_timeseries_with_max_clock_skew`. `ps` is unchanged and borrowed
 for the call. `*out` is a new handle the caller owns: free it with
 `mcds_packed_series_free`.

 `ps` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_packed_series_with_max_clock_skew(const mcds_packed_series *ps,
                                                   uint64_t skew_ms,
                                                   mcds_packed_series **out);

/*
 Add `delta` to the slot containing `ts_ms` (Unix ms), saturating at the
 width's maximum; the slot's new value in `*out_value`. 2 round trips
 (1 when the slot does not change), 2 more per lost CAS race (up to 64
 attempts, then `MCDS_CONFLICT`). `MCDS_INVALID_ARGUMENT` if the slot is
 past retention or more than the clock skew (60 s by default) ahead of
 the system clock; `MCDS_CORRUPT` if the period's item is not one of
 this series (another width, foreign bytes).

 `ps` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_packed_series_incr(const mcds_packed_series *ps,
                                    uint64_t ts_ms,
                                    uint32_t delta,
                                    uint32_t *out_value);

/*
 `mcds_packed_series_incr` the slot of now, by the system clock.

 `ps` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_packed_series_incr_now(const mcds_packed_series *ps,
                                        uint32_t delta,
                                        uint32_t *out_value);

/*
 The count of the slot containing `ts_ms`, in `*out_value`: a read as
 `mcds_packed_series_range` of one slot (0 when past retention, without
 reading).

 `ps` NULL or live; `out_value` NULL or writable.
 */
mcds_result mcds_packed_series_get(const mcds_packed_series *ps,
                                   uint64_t ts_ms,
                                   uint32_t *out_value);

/*
 Every slot from the one containing `from_ms` to the one containing
 `to_ms` (Unix ms, inclusive) whose period is within retention, oldest
 first, zeros included, as a new list in `*out` that the caller owns:
 free it with `mcds_slot_list_free`. `from_ms` after `to_ms` gives an
 empty list. At most 100 000 slots, else `MCDS_INVALID_ARGUMENT`. One
 round trip per server, then two more per server for the loss check:
 `MCDS_LOST` for a slot whose server lost items since it could first be
 counted (see `mcds_packed_series_with_loss_check`); `MCDS_CORRUPT` for
 bytes no increment wrote; `MCDS_UNSUPPORTED` through a store that cannot tell
 (a proxy).

 `ps` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_packed_series_range(const mcds_packed_series *ps,
                                     uint64_t from_ms,
                                     uint64_t to_ms,
                                     mcds_slot_list **out);

/*
 The sum of the slots of the range (as in `mcds_packed_series_range`),
 in `*out_sum`.

 `ps` NULL or live; `out_sum` NULL or writable.
 */
mcds_result mcds_packed_series_sum(const mcds_packed_series *ps,
                                   uint64_t from_ms,
                                   uint64_t to_ms,
                                   uint64_t *out_sum);

/*
 Free a packed series handle (NULL is a no-op); the data stays in the
 store.

 `ps` must be NULL or a live packed series, not used after this call.
 */
void mcds_packed_series_free(mcds_packed_series *ps);

/*
 Create the leaderboard `name`, exact up to `capacity` distinct members
 and a Space-Saving sketch of `capacity` counters past that. Every
 client must use the same capacity. `MCDS_INVALID_ARGUMENT` if
 `capacity` is 0 or a full board (`capacity` members of up to 128 bytes,
 145 bytes each) would not fit the store's item limit (about 7 000 on
 memcached's default 1 MiB). `*out` is a new handle the caller owns:
 free it with `mcds_leaderboard_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_leaderboard_new(const mcds_store *store,
                                 const char *name,
                                 uint32_t capacity,
                                 mcds_leaderboard **out);

/*
 A new handle on the same leaderboard whose increments give its item a
 TTL of `ttl_secs` seconds, counted again from each increment: the whole
 board is gone once it passes. 0 means never expires, as memcached's
 exptime 0 (and as `mcds_leaderboard_new`).

 memcached reads an exptime over 30 days (2 592 000 s) as an absolute
 Unix time; mcds converts, so `ttl_secs` always means seconds from the
 write (40 days is 40 days), capped at the last time memcached can parse
 (a signed 32-bit Unix time: January 2038). memcached's clock ticks in
 whole seconds: an item lives between `ttl_secs - 1` and `ttl_secs + 1`
 seconds (the embedded store: between `ttl_secs - 1` and `ttl_secs`).

 `lb` is unchanged and borrowed for the call. `*out` is a new handle the
 caller owns: free it with `mcds_leaderboard_free`.

 `lb` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_leaderboard_with_ttl(const mcds_leaderboard *lb,
                                      uint32_t ttl_secs,
                                      mcds_leaderboard **out);

/*
 The memcached key the board lives under (the store's prefix included):
 a pointer to its bytes in `*out_data` (owned by the handle, valid until
 it is freed; not NUL-terminated) and their length in `*out_len`.

 `lb` NULL or live; `out_data` and `out_len` NULL or writable.
 */
mcds_result mcds_leaderboard_key(const mcds_leaderboard *lb,
                                 const uint8_t **out_data,
                                 uintptr_t *out_len);

/*
 The capacity the handle was created with, in `*out`. No round trip.

 `lb` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_leaderboard_capacity(const mcds_leaderboard *lb, uint32_t *out);

/*
 ZINCRBY: add `by` (at least 1) to the count of the member of `len`
 bytes at `member` (at most 128 bytes; NULL is allowed when `len` is 0);
 its new count in `*out_count` (exact while the board is exact, an upper
 bound once sketched). One CAS read-modify-write, 2 round trips.
 `MCDS_INVALID_ARGUMENT` for `by` = 0, a longer member, or a total that
 would pass 2^64 - 1 (nothing is counted).

 `lb` NULL or live; `member` NULL or `len` readable bytes; `out_count`
 NULL or writable.
 */
mcds_result mcds_leaderboard_incr(const mcds_leaderboard *lb,
                                  const uint8_t *member,
                                  uintptr_t len,
                                  uint64_t by,
                                  uint64_t *out_count);

/*
 Apply `count` increments, in order, in one CAS update (2 round trips,
 whatever the count): increment `i` adds `bys[i]` (at least 1) to the
 member of `lens[i]` bytes at `members[i]` (at most 128 bytes; NULL is
 allowed when `lens[i]` is 0). The arrays are borrowed for the call and
 may be NULL when `count` is 0 (nothing changes). At most 1 000 000
 increments per call. Any bad increment (`bys[i]` = 0, a longer member)
 is `MCDS_INVALID_ARGUMENT` and nothing is counted; so is a total that
 would pass 2^64 - 1. A NULL array or member with a non-zero length is
 `MCDS_NULL_ARGUMENT`.

 `lb` NULL or live; `members`, `lens` and `bys` NULL or `count` readable
 values; each `members[i]` NULL or `lens[i]` readable bytes.
 */
mcds_result mcds_leaderboard_incr_many(const mcds_leaderboard *lb,
                                       const uint8_t *const *members,
                                       const uintptr_t *lens,
                                       const uint64_t *bys,
                                       uintptr_t count);

/*
 The whole board in `*out`: its capacity, total, whether it is exact,
 its largest possible error and how many members it holds (all zero but
 the capacity, and exact, for a board never counted). One round trip.

 `lb` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_leaderboard_summary(const mcds_leaderboard *lb, mcds_board_summary *out);

/*
 ZREVRANGE 0 k-1 WITHSCORES: the `k` members with the largest counts
 (fewer if fewer are on the board; none for `k` = 0), largest first,
 ties by member bytes, each with its count and error, in `*out`: a new
 list the caller owns, to free with `mcds_entry_list_free`. One round
 trip.

 `lb` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_leaderboard_top(const mcds_leaderboard *lb, uintptr_t k, mcds_entry_list **out);

/*
 ZSCORE of the member of `len` bytes at `member` (NULL is allowed when
 `len` is 0): in `*out_found` whether it is on the board, and if so its
 count in `*out_count` and how much that may overestimate its true count
 in `*out_error` (both 0 when it is not: its true count is then at most
 the summary's `max_error`). One round trip. All three outputs are
 written on success.

 `lb` NULL or live; `member` NULL or `len` readable bytes; the outputs
 NULL or writable.
 */
mcds_result mcds_leaderboard_score(const mcds_leaderboard *lb,
                                   const uint8_t *member,
                                   uintptr_t len,
                                   bool *out_found,
                                   uint64_t *out_count,
                                   uint64_t *out_error);

/*
 Delete the board: it is empty again. One round trip; clearing a missing
 board is not an error.

 `lb` NULL or live.
 */
mcds_result mcds_leaderboard_clear(const mcds_leaderboard *lb);

/*
 Free a leaderboard handle (NULL is a no-op).

 `lb` must be NULL or a live handle, not used after this call.
 */
void mcds_leaderboard_free(mcds_leaderboard *lb);

/*
 The number of entries in `list`, in `*out_len`.

 `list` NULL or live; `out_len` NULL or writable.
 */
mcds_result mcds_entry_list_len(const mcds_entry_list *list, uintptr_t *out_len);

/*
 Entry `index` of `list`: a pointer to its member's bytes (owned by the
 list, valid until it is freed; not NUL-terminated) and their length,
 its count, and how much the count may overestimate the member's true
 count (its true count is between `count - error` and `count`; the error
 is 0 while the board is exact). `MCDS_INVALID_ARGUMENT` if `index` is
 out of range.

 `list` NULL or live; the outputs NULL or writable.
 */
mcds_result mcds_entry_list_get(const mcds_entry_list *list,
                                uintptr_t index,
                                const uint8_t **out_data,
                                uintptr_t *out_len,
                                uint64_t *out_count,
                                uint64_t *out_error);

/*
 Free an entry list (NULL is a no-op).

 `list` must be NULL or a live list, not used after this call.
 */
void mcds_entry_list_free(mcds_entry_list *list);

/*
 Create the scalable Bloom filter `name`: a first layer for
 `initial_capacity` elements, then layers twice as large (see
 `mcds_scalable_bloom_with_growth`), for a compound false-positive rate
 below `error_rate` (between 0 and 1, e.g. 0.01) however many elements
 it takes. Every client must use the same numbers. `MCDS_INVALID_ARGUMENT`
 for a capacity of 0 or a rate out of range. `*out` is a new handle the
 caller owns: free it with `mcds_scalable_bloom_free`.

 `store` NULL or live; `name` NULL or NUL-terminated; `out` NULL or writable.
 */
mcds_result mcds_scalable_bloom_new(const mcds_store *store,
                                    const char *name,
                                    uint64_t initial_capacity,
                                    double error_rate,
                                    mcds_scalable_bloom **out);

/*
 A new handle on the same filter whose layers each hold `growth` (1 to
 16) times the previous one's capacity instead of 2 (RedisBloom's
 `EXPANSION`): fewer layers to read per query, more memory ahead of need.
 Every client must use the same growth. `MCDS_INVALID_ARGUMENT` out of
 range. `sb` is unchanged and borrowed for the call. `*out` is a new
 handle the caller owns: free it with `mcds_scalable_bloom_free`.

 `sb` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_scalable_bloom_with_growth(const mcds_scalable_bloom *sb,
                                            uint32_t growth,
                                            mcds_scalable_bloom **out);

/*
 The memcached key of the filter's header item (its layer count; the
 store's prefix included): a pointer to its bytes in `*out_data` (owned
 by the handle, valid until it is freed; not NUL-terminated) and their
 length in `*out_len`.

 `sb` NULL or live; `out_data` and `out_len` NULL or writable.
 */
mcds_result mcds_scalable_bloom_header_key(const mcds_scalable_bloom *sb,
                                           const uint8_t **out_data,
                                           uintptr_t *out_len);

/*
 Add the element of `len` bytes at `element` (NULL is allowed when `len`
 is 0); in `*out_new` whether it was new (in no layer yet). 2 round
 trips, 1 when it was already in, 2 more when the add fills the newest
 layer and grows the filter.

 `sb` NULL or live; `element` NULL or `len` readable bytes; `out_new`
 NULL or writable.
 */
mcds_result mcds_scalable_bloom_add(const mcds_scalable_bloom *sb,
                                    const uint8_t *element,
                                    uintptr_t len,
                                    bool *out_new);

/*
 Whether the element may have been added (no false negatives; false
 positives below the filter's rate), in `*out`. 1 round trip (2 when
 another client grew the filter since this handle last looked).

 `sb` NULL or live; `element` NULL or `len` readable bytes; `out` NULL or
 writable.
 */
mcds_result mcds_scalable_bloom_contains(const mcds_scalable_bloom *sb,
                                         const uint8_t *element,
                                         uintptr_t len,
                                         bool *out);

/*
 Whether each of `count` elements may have been added, as
 `mcds_scalable_bloom_contains` says: `out_contained[i]` for element `i`.
 One read of the header and the blocks they fall in, in every layer.
 Element `i` is the `lens[i]` bytes at `elements[i]` (any bytes; NULL is
 allowed when `lens[i]` is 0); both arrays are borrowed for the call.
 `out_contained` is the caller's array of `count` slots, written only on
 success. All three arrays may be NULL when `count` is 0. At most
 1 000 000 elements per call (`MCDS_INVALID_ARGUMENT`); a NULL array or
 element with a non-zero length is `MCDS_NULL_ARGUMENT`.

 `sb` NULL or live; `elements` and `lens` NULL or `count` readable values;
 each `elements[i]` NULL or `lens[i]` readable bytes; `out_contained`
 NULL or `count` writable slots.
 */
mcds_result mcds_scalable_bloom_contains_many(const mcds_scalable_bloom *sb,
                                              const uint8_t *const *elements,
                                              const uintptr_t *lens,
                                              uintptr_t count,
                                              bool *out_contained);

/*
 How many layers the filter has, in `*out` (1 until it first grows).
 One round trip.

 `sb` NULL or live; `out` NULL or writable.
 */
mcds_result mcds_scalable_bloom_layers(const mcds_scalable_bloom *sb, uintptr_t *out);

/*
 Delete the header and every block of every layer: the filter is empty,
 with one layer, again. On an error some items may be deleted already.

 `sb` NULL or live.
 */
mcds_result mcds_scalable_bloom_clear(const mcds_scalable_bloom *sb);

/*
 Free a scalable Bloom filter handle (NULL is a no-op).

 `sb` must be NULL or a live handle, not used after this call.
 */
void mcds_scalable_bloom_free(mcds_scalable_bloom *sb);


