/* libmcds from C: every function, bad input in every position, two threads
 * sharing handles, and 4 forked processes incrementing one counter. Needs
 * MCDS_TEST_SERVERS=host:port. */
#include "mcds.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int checks = 0;
static int failures = 0;

#define EXPECT(cond)                                                        \
    do {                                                                    \
        checks++;                                                           \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",   \
                    __FILE__, __LINE__, #cond, mcds_last_error_message());  \
        }                                                                   \
    } while (0)

#define EXPECT_CODE(call, code)                                             \
    do {                                                                    \
        mcds_result got_ = (call);                                          \
        checks++;                                                           \
        if (got_ != (code)) {                                               \
            failures++;                                                     \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n",    \
                    __FILE__, __LINE__, #call, mcds_result_name(got_),      \
                    mcds_result_name(code), mcds_last_error_message());     \
        }                                                                   \
    } while (0)

#define OK(call) EXPECT_CODE(call, MCDS_OK)

#define BYTES(s) ((const uint8_t *)(s))

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void counters(mcds_store *store) {
    mcds_counter *c = NULL;
    uint64_t v = 12345;
    OK(mcds_counter_new(store, "c-hits", &c));
    OK(mcds_counter_get(c, &v));
    EXPECT(v == 0);
    OK(mcds_counter_incr(c, 5, &v));
    EXPECT(v == 5);
    OK(mcds_counter_decr(c, 7, &v));
    EXPECT(v == 0);
    OK(mcds_counter_incr(c, 42, &v));
    OK(mcds_counter_get(c, &v));
    EXPECT(v == 42);
    mcds_counter_free(c);
}

static void locks(mcds_store *store) {
    mcds_lock *a = NULL, *b = NULL;
    bool acquired = false, released = false;
    OK(mcds_lock_new(store, "c-job", 30, &a));
    OK(mcds_lock_new(store, "c-job", 30, &b));
    OK(mcds_lock_try_acquire(a, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_try_acquire(b, &acquired));
    EXPECT(!acquired);
    EXPECT_CODE(mcds_lock_acquire(b, 50), MCDS_WAIT_TIMEOUT);
    EXPECT(strstr(mcds_last_error_message(), "c-job") != NULL);
    EXPECT_CODE(mcds_lock_try_acquire(a, &acquired), MCDS_INVALID_ARGUMENT); /* already held */
    OK(mcds_lock_release(a, &released));
    EXPECT(released);
    EXPECT_CODE(mcds_lock_release(a, &released), MCDS_INVALID_ARGUMENT); /* not held */
    OK(mcds_lock_acquire(b, 1000));
    mcds_lock_free(b); /* releases */
    OK(mcds_lock_try_acquire(a, &acquired));
    EXPECT(acquired);
    mcds_lock_free(a);
}

static void sets(mcds_store *store) {
    mcds_set *s = NULL;
    mcds_bytes_list *list = NULL;
    bool found = false;
    size_t n = 0, len = 0;
    const uint8_t *data = NULL;
    const uint8_t binary[] = {0, ' ', '\r', '\n', 0xff, '%'};
    OK(mcds_set_new(store, "c-tags", &s));
    OK(mcds_set_add(s, (const uint8_t *)"rust", 4));
    OK(mcds_set_add(s, binary, sizeof binary));
    OK(mcds_set_add(s, (const uint8_t *)"cas", 3));
    OK(mcds_set_remove(s, (const uint8_t *)"cas", 3));
    OK(mcds_set_contains(s, (const uint8_t *)"rust", 4, &found));
    EXPECT(found);
    OK(mcds_set_contains(s, (const uint8_t *)"cas", 3, &found));
    EXPECT(!found);
    OK(mcds_set_members(s, &list));
    OK(mcds_bytes_list_len(list, &n));
    EXPECT(n == 2);
    OK(mcds_bytes_list_get(list, 0, &data, &len));
    EXPECT(len == 4 && memcmp(data, "rust", 4) == 0);
    OK(mcds_bytes_list_get(list, 1, &data, &len));
    EXPECT(len == sizeof binary && memcmp(data, binary, sizeof binary) == 0);
    EXPECT_CODE(mcds_bytes_list_get(list, 2, &data, &len), MCDS_INVALID_ARGUMENT);
    mcds_bytes_list_free(list);
    mcds_set_free(s);
}

static void more_structures(mcds_store *store) {
    mcds_window *w = NULL;
    mcds_limiter *lim = NULL;
    mcds_log *log = NULL;
    mcds_event_list *events = NULL;
    mcds_table *t = NULL;
    mcds_bytes_list *list = NULL;
    mcds_decision d;
    uint64_t v = 0, at = 0, at0 = 0;
    size_t n = 0, len = 0;
    const uint8_t *data = NULL;
    bool b = false;

    OK(mcds_window_new(store, "c-online", 60, 6, &w));
    OK(mcds_window_incr(w, 3, &v));
    EXPECT(v == 3);
    OK(mcds_window_value(w, &v));
    EXPECT(v == 0); /* the current slot is not counted yet */
    EXPECT_CODE(mcds_window_new(store, "c-online", 60, 1, &w), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_window_incr(NULL, 1, &v), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_window_value(w, NULL), MCDS_NULL_ARGUMENT);
    mcds_window_free(w);

    OK(mcds_limiter_new(store, "c-api", 2, 60, false, &lim));
    OK(mcds_limiter_check(lim, &d));
    EXPECT(d.allowed && d.remaining == 1 && d.retry_after_ms == 0);
    OK(mcds_limiter_check(lim, &d));
    EXPECT(d.allowed && d.remaining == 0);
    OK(mcds_limiter_peek(lim, &d));
    EXPECT(!d.allowed);
    OK(mcds_limiter_check(lim, &d));
    EXPECT(!d.allowed && d.retry_after_ms > 0 && d.retry_after_ms <= 60000);
    EXPECT_CODE(mcds_limiter_new(store, "c-api", 0, 60, false, &lim), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_limiter_check(lim, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_limiter_peek(NULL, &d), MCDS_NULL_ARGUMENT);
    mcds_limiter_free(lim);
    OK(mcds_limiter_new(store, "c-api-sliding", 5, 10, true, &lim));
    OK(mcds_limiter_check(lim, &d));
    EXPECT(d.allowed);
    mcds_limiter_free(lim);

    OK(mcds_log_new(store, "c-audit", 60, 11, &log));
    OK(mcds_log_put(log, (const uint8_t *)"login ann", 9, &at0));
    OK(mcds_log_put(log, (const uint8_t *)"\0bin\r\n", 6, &at));
    EXPECT(at >= at0);
    OK(mcds_log_fetch(log, 0, UINT64_MAX, &events));
    OK(mcds_event_list_len(events, &n));
    EXPECT(n == 2);
    OK(mcds_event_list_get(events, 0, &at, &data, &len));
    EXPECT(at == at0 && len == 9 && memcmp(data, "login ann", 9) == 0);
    OK(mcds_event_list_get(events, 1, &at, &data, &len));
    EXPECT(len == 6 && memcmp(data, "\0bin\r\n", 6) == 0);
    EXPECT_CODE(mcds_event_list_get(events, 2, &at, &data, &len), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_event_list_get(events, 0, NULL, &data, &len), MCDS_NULL_ARGUMENT);
    mcds_event_list_free(events);
    EXPECT_CODE(mcds_log_new(store, "c-audit", 0, 11, &log), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_log_put(log, NULL, 3, &at), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_log_fetch(log, 0, 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_event_list_len(NULL, &n), MCDS_NULL_ARGUMENT);
    mcds_log_free(log);

    OK(mcds_table_new(store, "c-users", &t));
    OK(mcds_table_set(t, (const uint8_t *)"ann", 3, (const uint8_t *)"admin", 5));
    OK(mcds_table_set(t, (const uint8_t *)"two words", 9, NULL, 0));
    OK(mcds_table_has(t, (const uint8_t *)"ann", 3, &b));
    EXPECT(b);
    OK(mcds_table_get(t, (const uint8_t *)"ann", 3, &list));
    EXPECT(list != NULL);
    OK(mcds_bytes_list_get(list, 0, &data, &len));
    EXPECT(len == 5 && memcmp(data, "admin", 5) == 0);
    mcds_bytes_list_free(list);
    OK(mcds_table_get(t, (const uint8_t *)"nobody", 6, &list));
    EXPECT(list == NULL);
    OK(mcds_table_delete(t, (const uint8_t *)"ann", 3, &b));
    EXPECT(b);
    OK(mcds_table_delete(t, (const uint8_t *)"ann", 3, &b));
    EXPECT(!b);
    OK(mcds_table_keys(t, &list));
    OK(mcds_bytes_list_len(list, &n));
    EXPECT(n == 1);
    mcds_bytes_list_free(list);
    EXPECT_CODE(mcds_table_new(store, "bad name", &t), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_table_set(t, NULL, 1, NULL, 0), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_table_has(NULL, (const uint8_t *)"a", 1, &b), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_table_get(t, (const uint8_t *)"a", 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_table_delete(t, (const uint8_t *)"a", 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_table_keys(t, NULL), MCDS_NULL_ARGUMENT);
    mcds_table_free(t);

    mcds_window_free(NULL);
    mcds_limiter_free(NULL);
    mcds_log_free(NULL);
    mcds_event_list_free(NULL);
    mcds_table_free(NULL);
}

/* NULL in every position, invalid UTF-8, bad keys: documented codes, outputs
 * untouched, no crash. */
static void sketches(mcds_store *store) {
    mcds_hll *day1 = NULL, *day2 = NULL, *week = NULL;
    mcds_bloom *seen = NULL, *other = NULL;
    mcds_bitmap *days = NULL;
    bool changed = false, found = true, previous = true;
    uint64_t n = 0;
    char url[32];

    OK(mcds_hll_new(store, "c-crawled-1", &day1));
    OK(mcds_hll_new(store, "c-crawled-2", &day2));
    OK(mcds_hll_new(store, "c-crawled-week", &week));
    OK(mcds_hll_add(day1, (const uint8_t *)"redis.io", 8, &changed));
    EXPECT(changed);
    OK(mcds_hll_add(day1, (const uint8_t *)"redis.io", 8, &changed));
    EXPECT(!changed);
    for (int i = 0; i < 200; i++) {
        int len = snprintf(url, sizeof url, "/page/%d", i);
        OK(mcds_hll_add(i % 2 ? day1 : day2, (const uint8_t *)url, (size_t)len, &changed));
    }
    OK(mcds_hll_count(day1, &n));
    EXPECT(n >= 96 && n <= 106);
    const mcds_hll *both[] = {day1, day2};
    OK(mcds_hll_merge(week, both, 2));
    OK(mcds_hll_count(week, &n));
    EXPECT(n >= 192 && n <= 211);
    OK(mcds_hll_merge(week, NULL, 0));
    EXPECT_CODE(mcds_hll_merge(week, NULL, 2), MCDS_NULL_ARGUMENT);
    const mcds_hll *with_null[] = {day1, NULL};
    EXPECT_CODE(mcds_hll_merge(week, with_null, 2), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_hll_add(NULL, (const uint8_t *)"a", 1, &changed), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_hll_add(day1, NULL, 1, &changed), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_hll_add(day1, (const uint8_t *)"a", 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_hll_count(day1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_hll_new(store, "", &day2), MCDS_INVALID_KEY);

    OK(mcds_bloom_new(store, "c-seen", 10000, 0.01, &seen));
    OK(mcds_bloom_add(seen, (const uint8_t *)"ann", 3, &changed));
    EXPECT(changed);
    OK(mcds_bloom_add(seen, (const uint8_t *)"ann", 3, &changed));
    EXPECT(!changed);
    OK(mcds_bloom_contains(seen, (const uint8_t *)"ann", 3, &found));
    EXPECT(found);
    OK(mcds_bloom_contains(seen, (const uint8_t *)"bob", 3, &found));
    EXPECT(!found);
    EXPECT_CODE(mcds_bloom_new(store, "c-bad", 0, 0.01, &other), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_bloom_new(store, "c-bad", 100, 1.5, &other), MCDS_INVALID_ARGUMENT);
    EXPECT(other == NULL);
    /* Reopened with other parameters: refused, not misread. */
    OK(mcds_bloom_new(store, "c-seen", 500, 0.01, &other));
    EXPECT_CODE(mcds_bloom_contains(other, (const uint8_t *)"ann", 3, &found), MCDS_CORRUPT);
    EXPECT_CODE(mcds_bloom_contains(NULL, (const uint8_t *)"a", 1, &found), MCDS_NULL_ARGUMENT);

    OK(mcds_bitmap_new(store, "c-logins", 1767225600, 86400000, &days));
    OK(mcds_bitmap_set(days, 0, &previous));
    EXPECT(!previous);
    OK(mcds_bitmap_set(days, 0, &previous));
    EXPECT(previous);
    OK(mcds_bitmap_set(days, 70000, &previous));
    OK(mcds_bitmap_mark(days, 1767225600000ULL + 2 * 86400000ULL, &previous));
    EXPECT(!previous);
    OK(mcds_bitmap_get(days, 2, &found));
    EXPECT(found);
    OK(mcds_bitmap_count(days, 0, 100000, &n));
    EXPECT(n == 3);
    OK(mcds_bitmap_count(days, 1, 69999, &n));
    EXPECT(n == 1);
    EXPECT_CODE(mcds_bitmap_mark(days, 1000, &previous), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_bitmap_new(store, "c-zero", 0, 0, &days), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_bitmap_count(NULL, 0, 1, &n), MCDS_NULL_ARGUMENT);

    mcds_hll_free(day1);
    mcds_hll_free(day2);
    mcds_hll_free(week);
    mcds_bloom_free(seen);
    mcds_bloom_free(other);
    mcds_bitmap_free(days);
    mcds_hll_free(NULL);
    mcds_bloom_free(NULL);
    mcds_bitmap_free(NULL);
}

static void bad_input(mcds_store *store) {
    mcds_store *no_store = (mcds_store *)0x1;
    mcds_counter *c = NULL;
    mcds_lock *l = NULL;
    mcds_set *s = NULL;
    mcds_bytes_list *list = NULL;
    uint64_t v = 777;
    bool b = true;
    size_t n = 99;
    const uint8_t *data = NULL;

    EXPECT_CODE(mcds_store_new_memory(NULL), MCDS_NULL_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "out is NULL") != NULL);
    EXPECT_CODE(mcds_store_new_memcached(NULL, &no_store), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_new_memcached("127.0.0.1:1", NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_new_memcached("not a server", &no_store), MCDS_INVALID_ARGUMENT);
    EXPECT(no_store == (mcds_store *)0x1); /* untouched on failure */

    EXPECT_CODE(mcds_counter_new(NULL, "x", &c), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_new(store, NULL, &c), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_new(store, "x", NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_new(store, "\xff\xfe", &c), MCDS_INVALID_UTF8);
    EXPECT_CODE(mcds_counter_new(store, "has space", &c), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_counter_new(store, "x\r\nflush_all", &c), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_counter_new(store, "", &c), MCDS_INVALID_KEY);
    EXPECT(c == NULL);
    EXPECT_CODE(mcds_counter_incr(NULL, 1, &v), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_decr(NULL, 1, &v), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_get(NULL, &v), MCDS_NULL_ARGUMENT);
    OK(mcds_counter_new(store, "bad-input", &c));
    EXPECT_CODE(mcds_counter_incr(c, 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_decr(c, 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_get(c, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(v == 777);
    OK(mcds_counter_get(c, &v));
    EXPECT(v == 0); /* the failed incr with a NULL output did nothing */
    mcds_counter_free(c);

    EXPECT_CODE(mcds_lock_new(NULL, "l", 10, &l), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_new(store, NULL, 10, &l), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_new(store, "l", 10, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_new(store, "l", 0, &l), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_new(store, "tab\tname", 10, &l), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_lock_try_acquire(NULL, &b), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_acquire(NULL, 10), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_release(NULL, &b), MCDS_NULL_ARGUMENT);
    OK(mcds_lock_new(store, "l", 10, &l));
    EXPECT_CODE(mcds_lock_try_acquire(l, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_release(l, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(b == true);
    mcds_lock_free(l);

    EXPECT_CODE(mcds_set_new(NULL, "s", &s), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_new(store, NULL, &s), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_new(store, "s", NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_new(store, "\xc3\x28", &s), MCDS_INVALID_UTF8);
    OK(mcds_set_new(store, "s", &s));
    EXPECT_CODE(mcds_set_add(NULL, (const uint8_t *)"a", 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_add(s, NULL, 1), MCDS_NULL_ARGUMENT);
    OK(mcds_set_add(s, NULL, 0)); /* the empty member */
    EXPECT_CODE(mcds_set_remove(NULL, (const uint8_t *)"a", 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_remove(s, NULL, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_contains(NULL, (const uint8_t *)"a", 1, &b), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_contains(s, NULL, 1, &b), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_contains(s, (const uint8_t *)"a", 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_members(NULL, &list), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_members(s, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_bytes_list_len(NULL, &n), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_bytes_list_get(NULL, 0, &data, &n), MCDS_NULL_ARGUMENT);
    OK(mcds_set_members(s, &list));
    EXPECT_CODE(mcds_bytes_list_len(list, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_bytes_list_get(list, 0, NULL, &n), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_bytes_list_get(list, 0, &data, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(n == 99 && data == NULL);
    mcds_bytes_list_free(list);
    mcds_set_free(s);

    /* Oversized values are refused, not truncated. */
    {
        size_t big = 2 * 1024 * 1024;
        uint8_t *huge = calloc(big, 1);
        OK(mcds_set_new(store, "huge", &s));
        EXPECT_CODE(mcds_set_add(s, huge, big), MCDS_VALUE_TOO_LARGE);
        mcds_set_free(s);
        free(huge);
    }

    /* Freeing NULL is a no-op. */
    mcds_store_free(NULL);
    mcds_counter_free(NULL);
    mcds_lock_free(NULL);
    mcds_set_free(NULL);
    mcds_bytes_list_free(NULL);
    EXPECT(strcmp(mcds_result_name(MCDS_OK), "MCDS_OK") == 0);
    EXPECT(strcmp(mcds_result_name(123456), "MCDS_UNKNOWN") == 0);
}

/* ---- Exact keys: a structure on a key another application uses. ---- */

/* A key literal as the (bytes, length) pair the _with_key calls take. */
#define KEY(s) BYTES(s), strlen(s)

static void exact_key_counters(mcds_store *store, mcds_store *app) {
    mcds_counter *hits = NULL, *again = NULL, *from_app = NULL, *named = NULL, *raw = NULL;
    mcds_counter *entry = NULL, *untouched = (mcds_counter *)0x1;
    mcds_table *t = NULL;
    mcds_bytes_list *list = NULL;
    const uint8_t *data = NULL;
    size_t len = 0;
    uint64_t v = 0;
    char long_key[251];
    memset(long_key, 'k', sizeof long_key);

    /* Three handles on the exact key "hits", one from a prefixed store
     * (whose prefix is not applied): one counter. */
    OK(mcds_counter_new_with_key(store, KEY("hits"), &hits));
    OK(mcds_counter_new_with_key(store, KEY("hits"), &again));
    OK(mcds_counter_new_with_key(app, KEY("hits"), &from_app));
    OK(mcds_counter_incr(hits, 5, &v));
    EXPECT(v == 5);
    OK(mcds_counter_incr(again, 2, &v));
    EXPECT(v == 7);
    OK(mcds_counter_incr(from_app, 1, &v));
    EXPECT(v == 8);
    OK(mcds_counter_decr(again, 3, &v));
    EXPECT(v == 5);
    OK(mcds_counter_get(hits, &v));
    EXPECT(v == 5);
    /* The counter named "hits" is another key (c-app/counter:hits:value). */
    OK(mcds_counter_new(app, "hits", &named));
    OK(mcds_counter_get(named, &v));
    EXPECT(v == 0);
    mcds_counter_free(named);
    /* A named counter's exact key is counter:<name>:value, unprefixed. */
    OK(mcds_counter_new(store, "c-exact", &named));
    OK(mcds_counter_incr(named, 3, &v));
    OK(mcds_counter_new_with_key(app, KEY("counter:c-exact:value"), &raw));
    OK(mcds_counter_incr(raw, 4, &v));
    EXPECT(v == 7);
    OK(mcds_counter_get(named, &v));
    EXPECT(v == 7);
    /* Exact-key and named counters of one store batch together. */
    {
        const mcds_counter *batch[3] = {hits, named, from_app};
        const uint64_t deltas[3] = {10, 1, 1};
        uint64_t values[3] = {0, 0, 0};
        mcds_result results[3] = {777, 777, 777};
        OK(mcds_counter_incr_many(batch, deltas, 3, values, results));
        EXPECT(values[0] == 15 && values[1] == 8 && values[2] == 16);
    }
    /* Bytes another program wrote under a key are the counter's, and its
     * increments are what that program reads back: written raw here through
     * a table, whose entry "hits" lives as it is under table:c-raw:v:hits. */
    OK(mcds_table_new(store, "c-raw", &t));
    OK(mcds_table_set(t, KEY("hits"), KEY("41")));
    OK(mcds_counter_new_with_key(store, KEY("table:c-raw:v:hits"), &entry));
    OK(mcds_counter_get(entry, &v));
    EXPECT(v == 41);
    OK(mcds_counter_incr(entry, 1, &v));
    EXPECT(v == 42);
    OK(mcds_table_get(t, KEY("hits"), &list));
    EXPECT(list != NULL);
    OK(mcds_bytes_list_get(list, 0, &data, &len));
    EXPECT(len == 2 && memcmp(data, "42", 2) == 0);
    mcds_bytes_list_free(list);
    OK(mcds_table_set(t, KEY("hits"), KEY("forty")));
    EXPECT_CODE(mcds_counter_get(entry, &v), MCDS_CORRUPT);
    EXPECT_CODE(mcds_counter_incr(entry, 1, &v), MCDS_NON_NUMERIC);
    mcds_table_free(t);
    mcds_counter_free(entry);

    /* Keys are bytes, validated as memcached keys; NULL in every position. */
    EXPECT_CODE(mcds_counter_new_with_key(NULL, KEY("hits"), &untouched), MCDS_NULL_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "store is NULL") != NULL);
    EXPECT_CODE(mcds_counter_new_with_key(store, NULL, 4, &untouched), MCDS_NULL_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "key is NULL") != NULL);
    EXPECT_CODE(mcds_counter_new_with_key(store, KEY("hits"), NULL), MCDS_NULL_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "out is NULL") != NULL);
    EXPECT_CODE(mcds_counter_new_with_key(store, KEY("bad key"), NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_new_with_key(store, KEY("two words"), &untouched), MCDS_INVALID_KEY);
    EXPECT(strstr(mcds_last_error_message(), "it contains a space") != NULL);
    EXPECT_CODE(mcds_counter_new_with_key(store, KEY("x\r\nflush_all"), &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_counter_new_with_key(store, BYTES("a\0b"), 3, &untouched), MCDS_INVALID_KEY);
    EXPECT(strstr(mcds_last_error_message(), "NUL byte") != NULL);
    EXPECT_CODE(mcds_counter_new_with_key(store, BYTES(long_key), 251, &untouched), MCDS_INVALID_KEY);
    EXPECT(strstr(mcds_last_error_message(), "longer than 250 bytes") != NULL);
    EXPECT_CODE(mcds_counter_new_with_key(store, KEY(""), &untouched), MCDS_INVALID_KEY);
    EXPECT(strstr(mcds_last_error_message(), "it is empty") != NULL);
    EXPECT_CODE(mcds_counter_new_with_key(store, NULL, 0, &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_counter_new_with_key(store, BYTES("hits"), SIZE_MAX, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(untouched == (mcds_counter *)0x1);
    OK(mcds_counter_new_with_key(store, BYTES(long_key), 250, &entry)); /* 250 bytes: the longest */
    OK(mcds_counter_incr(entry, 1, &v));
    EXPECT(v == 1);
    mcds_counter_free(entry);
    OK(mcds_counter_new_with_key(store, KEY("caf\xc3\xa9"), &entry)); /* UTF-8 bytes */
    OK(mcds_counter_incr(entry, 2, &v));
    EXPECT(v == 2);
    mcds_counter_free(entry);

    mcds_counter_free(hits);
    mcds_counter_free(again);
    mcds_counter_free(from_app);
    mcds_counter_free(named);
    mcds_counter_free(raw);
}

static void exact_key_locks(mcds_store *store, mcds_store *app) {
    mcds_lock *a = NULL, *b = NULL, *fenced = NULL, *named = NULL, *raw = NULL, *foreign = NULL;
    mcds_lock *untouched = (mcds_lock *)0x1;
    mcds_counter *fence = NULL;
    mcds_table *t = NULL;
    bool acquired = false, released = false, found = true;
    char *holder = NULL, *token = NULL;
    uint64_t v = 0, fencing = 0;
    char long_key[251];
    memset(long_key, 'k', sizeof long_key);

    /* Two handles on one exact key, one from a prefixed store: each
     * excludes the other. */
    OK(mcds_lock_new_with_key(store, KEY("c-report-lock"), 30, &a));
    OK(mcds_lock_new_with_key(app, KEY("c-report-lock"), 30, &b));
    OK(mcds_lock_try_acquire(a, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_try_acquire(b, &acquired));
    EXPECT(!acquired);
    EXPECT_CODE(mcds_lock_acquire(b, 50), MCDS_WAIT_TIMEOUT);
    EXPECT(strstr(mcds_last_error_message(), "c-report-lock") != NULL);
    OK(mcds_lock_owner_token(a, &token));
    OK(mcds_lock_holder(b, &holder));
    EXPECT(holder != NULL && token != NULL && strcmp(holder, token) == 0);
    mcds_string_free(holder);
    mcds_string_free(token);
    OK(mcds_lock_release(a, &released));
    EXPECT(released);
    OK(mcds_lock_try_acquire(b, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_try_acquire(a, &acquired));
    EXPECT(!acquired);
    mcds_lock_free(b); /* releases */
    OK(mcds_lock_holder(a, &holder));
    EXPECT(holder == NULL);
    /* Fencing tokens count in <key>:fence. */
    OK(mcds_lock_with_fencing(a, true, &fenced));
    OK(mcds_lock_acquire(fenced, 1000));
    OK(mcds_lock_fencing_token(fenced, &fencing));
    OK(mcds_counter_new_with_key(store, KEY("c-report-lock:fence"), &fence));
    OK(mcds_counter_get(fence, &v));
    EXPECT(fencing >= 1 && v == fencing);
    OK(mcds_lock_release(fenced, &released));
    EXPECT(released);
    mcds_counter_free(fence);
    mcds_lock_free(fenced);

    /* A named lock's exact key is lock:<name>:owner, unprefixed. */
    OK(mcds_lock_new(store, "c-exact-job", 30, &named));
    OK(mcds_lock_new_with_key(app, KEY("lock:c-exact-job:owner"), 30, &raw));
    OK(mcds_lock_try_acquire(named, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_try_acquire(raw, &acquired));
    EXPECT(!acquired);
    OK(mcds_lock_release(named, &released));
    OK(mcds_lock_try_acquire(raw, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_try_acquire(named, &acquired));
    EXPECT(!acquired);
    OK(mcds_lock_release(raw, &released));
    EXPECT(released);

    /* An add-based lock another program holds: a value added under the key
     * (here the table entry "held", at table:c-rawlock:v:held). */
    OK(mcds_table_new(store, "c-rawlock", &t));
    OK(mcds_table_set(t, KEY("held"), KEY("php-token")));
    OK(mcds_lock_new_with_key(store, KEY("table:c-rawlock:v:held"), 30, &foreign));
    OK(mcds_lock_try_acquire(foreign, &acquired));
    EXPECT(!acquired);
    OK(mcds_lock_holder(foreign, &holder));
    EXPECT(holder != NULL && strcmp(holder, "php-token") == 0);
    mcds_string_free(holder);
    OK(mcds_table_delete(t, KEY("held"), &found)); /* the other program unlocks */
    EXPECT(found);
    OK(mcds_lock_try_acquire(foreign, &acquired));
    EXPECT(acquired);
    OK(mcds_table_has(t, KEY("held"), &found)); /* our lease is the key's value */
    EXPECT(found);
    OK(mcds_lock_release(foreign, &released));
    EXPECT(released);
    OK(mcds_table_has(t, KEY("held"), &found));
    EXPECT(!found);
    mcds_table_free(t);
    mcds_lock_free(foreign);

    /* Bad input: NULL in every position, bad keys, a TTL of 0. */
    EXPECT_CODE(mcds_lock_new_with_key(NULL, KEY("l"), 10, &untouched), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_new_with_key(store, NULL, 1, 10, &untouched), MCDS_NULL_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "key is NULL") != NULL);
    EXPECT_CODE(mcds_lock_new_with_key(store, KEY("l"), 10, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_new_with_key(store, KEY("l"), 0, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_new_with_key(store, KEY("report lock"), 10, &untouched), MCDS_INVALID_KEY);
    EXPECT(strstr(mcds_last_error_message(), "it contains a space") != NULL);
    EXPECT_CODE(mcds_lock_new_with_key(store, KEY("tab\tkey"), 10, &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_lock_new_with_key(store, BYTES(long_key), 251, 10, &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_lock_new_with_key(store, BYTES(long_key), 245, 10, &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_lock_new_with_key(store, KEY(""), 10, &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_lock_new_with_key(store, NULL, 0, 10, &untouched), MCDS_INVALID_KEY);
    EXPECT(untouched == (mcds_lock *)0x1);
    OK(mcds_lock_new_with_key(store, BYTES(long_key), 244, 10, &b)); /* room for ":fence" */
    OK(mcds_lock_try_acquire(b, &acquired));
    EXPECT(acquired);
    mcds_lock_free(b);

    mcds_lock_free(a);
    mcds_lock_free(named);
    mcds_lock_free(raw);
}

static void exact_keys(mcds_store *store) {
    mcds_store *app = NULL;
    OK(mcds_store_with_prefix(store, "c-app/", &app));
    exact_key_counters(store, app);
    exact_key_locks(store, app);
    mcds_store_free(app);
}

/* ---- Store options: the builder and the key prefix. ---- */

static void store_options(const char *servers) {
    mcds_store_builder *b = NULL;
    mcds_store *s = NULL, *app = NULL, *other = NULL, *untouched = (mcds_store *)0x1;
    mcds_counter *c1 = NULL, *c2 = NULL;
    mcds_set *set = NULL;
    uint64_t v = 0;
    uint8_t big[2000];
    memset(big, 'x', sizeof big);

    /* The builder: every setter checks its range. */
    EXPECT_CODE(mcds_store_builder_new(NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_store_builder_new(&b));
    EXPECT_CODE(mcds_store_builder_set_connect_timeout_ms(NULL, 100), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_connect_timeout_ms(b, 0), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "connect timeout") != NULL);
    EXPECT_CODE(mcds_store_builder_set_connect_timeout_ms(b, 3600001), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_connect_timeout_ms(b, UINT32_MAX), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_io_timeout_ms(NULL, 100), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_io_timeout_ms(b, 0), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_io_timeout_ms(b, UINT32_MAX), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_item_size_limit(NULL, 4096), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_item_size_limit(b, 0), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_item_size_limit(b, 1023), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_item_size_limit(b, (1ULL << 30) + 1), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_memory_limit(NULL, 4096), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_memory_limit(b, 0), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_memory_limit(b, UINT64_MAX), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_memory_limit(b, (1ULL << 40) + 1), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_set_evict(NULL, true), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_build_memory(NULL, &s), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_build_memory(b, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_build_memcached(NULL, servers, &s), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_build_memcached(b, NULL, &s), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_build_memcached(b, servers, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_build_memcached(b, "\xff", &untouched), MCDS_INVALID_UTF8);
    EXPECT_CODE(mcds_store_builder_build_memcached(b, "", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_builder_build_memcached(b, "no port", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(untouched == (mcds_store *)0x1);

    /* Timeouts are memcached's; asking the embedded store for them fails. */
    OK(mcds_store_builder_set_connect_timeout_ms(b, 500));
    OK(mcds_store_builder_set_io_timeout_ms(b, 3600000));
    OK(mcds_store_builder_set_io_timeout_ms(b, 250));
    OK(mcds_store_builder_set_item_size_limit(b, 1024));
    EXPECT_CODE(mcds_store_builder_build_memory(b, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "timeout") != NULL);
    OK(mcds_store_builder_build_memcached(b, servers, &s));
    OK(mcds_counter_new(s, "c-built", &c1));
    OK(mcds_counter_incr(c1, 2, &v));
    EXPECT(v == 2);
    mcds_counter_free(c1);
    /* The item size limit is checked before sending. */
    OK(mcds_set_new(s, "c-small-items", &set));
    EXPECT_CODE(mcds_set_add(set, big, sizeof big), MCDS_VALUE_TOO_LARGE);
    OK(mcds_set_add(set, big, 100));
    mcds_set_free(set);
    mcds_store_free(s);
    /* The builder is not consumed: a second store from it. */
    OK(mcds_store_builder_build_memcached(b, servers, &s));
    mcds_store_free(s);
    mcds_store_builder_free(b);

    /* The memory budget is the embedded store's. */
    OK(mcds_store_builder_new(&b));
    OK(mcds_store_builder_set_memory_limit(b, 8192));
    OK(mcds_store_builder_set_evict(b, false));
    EXPECT_CODE(mcds_store_builder_build_memcached(b, servers, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "memory limit") != NULL);
    EXPECT(untouched == (mcds_store *)0x1);
    OK(mcds_store_builder_build_memory(b, &s));
    {
        /* With eviction off, a full budget refuses writes like memcached -M. */
        mcds_result r = MCDS_OK;
        int i;
        char name[32];
        for (i = 0; i < 1000 && r == MCDS_OK; i++) {
            snprintf(name, sizeof name, "c-oom-%d", i);
            r = mcds_counter_new(s, name, &c1);
            if (r == MCDS_OK) {
                r = mcds_counter_incr(c1, 1, &v);
                mcds_counter_free(c1);
            }
        }
        EXPECT_CODE(r, MCDS_OUT_OF_MEMORY);
        EXPECT(i > 10 && i < 1000);
    }
    mcds_store_free(s);
    OK(mcds_store_builder_set_evict(b, true));
    OK(mcds_store_builder_build_memory(b, &s));
    {
        /* With eviction on, the same writes all succeed. */
        mcds_result r = MCDS_OK;
        char name[32];
        for (int i = 0; i < 1000 && r == MCDS_OK; i++) {
            snprintf(name, sizeof name, "c-lru-%d", i);
            r = mcds_counter_new(s, name, &c1);
            if (r == MCDS_OK) {
                r = mcds_counter_incr(c1, 1, &v);
                mcds_counter_free(c1);
            }
        }
        EXPECT_CODE(r, MCDS_OK);
    }
    mcds_store_free(s);
    mcds_store_builder_free(b);
    mcds_store_builder_free(NULL);

    /* A prefix: same names, different keys, same connections. */
    OK(mcds_store_new_memcached(servers, &s));
    EXPECT_CODE(mcds_store_with_prefix(NULL, "app/", &app), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_with_prefix(s, NULL, &app), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_with_prefix(s, "app/", NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_with_prefix(s, "bad prefix", &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_store_with_prefix(s, "ctl\r\n", &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_store_with_prefix(s, "\xc3\x28", &untouched), MCDS_INVALID_UTF8);
    {
        char long_prefix[251];
        memset(long_prefix, 'p', 250);
        long_prefix[250] = '\0';
        EXPECT_CODE(mcds_store_with_prefix(s, long_prefix, &untouched), MCDS_INVALID_KEY);
    }
    EXPECT(untouched == (mcds_store *)0x1);
    OK(mcds_store_with_prefix(s, "c-app-a/", &app));
    OK(mcds_store_with_prefix(app, "c-app-b/", &other)); /* replaces, not appends */
    OK(mcds_counter_new(app, "c-shared-name", &c1));
    OK(mcds_counter_new(other, "c-shared-name", &c2));
    OK(mcds_counter_incr(c1, 5, &v));
    EXPECT(v == 5);
    OK(mcds_counter_incr(c2, 1, &v));
    EXPECT(v == 1);
    mcds_counter_free(c2);
    mcds_store_free(other);
    /* A handle made with the same prefix from the plain one sees the same keys. */
    OK(mcds_store_with_prefix(s, "c-app-b/", &other));
    OK(mcds_counter_new(other, "c-shared-name", &c2));
    OK(mcds_counter_get(c2, &v));
    EXPECT(v == 1);
    mcds_counter_free(c2);
    mcds_store_free(other);
    /* "" removes the prefix. */
    OK(mcds_store_with_prefix(app, "", &other));
    OK(mcds_counter_new(other, "c-shared-name", &c2));
    OK(mcds_counter_get(c2, &v));
    EXPECT(v == 0);
    mcds_counter_free(c2);
    mcds_store_free(other);
    /* The original handle can go first: the prefixed one keeps the store. */
    mcds_store_free(s);
    OK(mcds_counter_incr(c1, 1, &v));
    EXPECT(v == 6);
    mcds_counter_free(c1);
    OK(mcds_counter_new(app, "c-after-free", &c1));
    OK(mcds_counter_incr(c1, 1, &v));
    mcds_counter_free(c1);
    mcds_store_free(app);
}

/* ---- Locks: extend, fencing, owner label, holder, auto-extend. ---- */

/* Deletes the lock "c-lost" of `store` behind its holders' back, as an
 * eviction or a flush would: the lock lives in a store prefixed
 * "table:c-evict:v:", so its key is also the entry key of the member
 * "lock:c-lost:owner" of the table "c-evict". */
static void evict_lost_lock(mcds_store *store) {
    mcds_table *t = NULL;
    bool existed = false;
    const char *member = "lock:c-lost:owner";
    OK(mcds_table_new(store, "c-evict", &t));
    OK(mcds_table_delete(t, BYTES(member), strlen(member), &existed));
    EXPECT(existed);
    mcds_table_free(t);
}

static void lock_leases(mcds_store *store) {
    mcds_lock *plain = NULL, *fenced = NULL, *labelled = NULL, *slow = NULL;
    mcds_lock *untouched = (mcds_lock *)0x1, *lost = NULL;
    mcds_store *evictable = NULL;
    bool b = false, acquired = false, released = true, extended = false;
    uint64_t t1 = 0, t2 = 0, token = 777;
    char *holder = (char *)0x1, *mine = NULL;
    char long_label[202];

    OK(mcds_lock_new(store, "c-lease", 30, &plain));
    /* Nothing held: every lease call says so. */
    EXPECT_CODE(mcds_lock_extend(plain, 30, &b), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_auto_extend(plain, 30), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_is_lost(plain, &b), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_fencing_token(plain, &token), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_owner_token(plain, &mine), MCDS_INVALID_ARGUMENT);
    EXPECT(token == 777 && mine == NULL);
    OK(mcds_lock_holder(plain, &holder));
    EXPECT(holder == NULL); /* free: NULL written */

    /* Extend. */
    OK(mcds_lock_try_acquire(plain, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_extend(plain, 60, &extended));
    EXPECT(extended);
    EXPECT_CODE(mcds_lock_extend(plain, 0, &extended), MCDS_INVALID_ARGUMENT);
    OK(mcds_lock_is_lost(plain, &b));
    EXPECT(!b);
    /* No fencing on a plain handle, even while held. */
    EXPECT_CODE(mcds_lock_fencing_token(plain, &token), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "mcds_lock_with_fencing") != NULL);
    /* The holder is this handle's owner token. */
    OK(mcds_lock_owner_token(plain, &mine));
    OK(mcds_lock_holder(plain, &holder));
    EXPECT(mine != NULL && holder != NULL && strcmp(mine, holder) == 0);
    mcds_string_free(mine);
    mcds_string_free(holder);
    mcds_string_free(NULL);
    OK(mcds_lock_release(plain, &released));
    EXPECT(released);

    /* Fencing: a derived handle, strictly increasing tokens. */
    EXPECT_CODE(mcds_lock_with_fencing(NULL, true, &fenced), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_fencing(plain, true, NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_lock_with_fencing(plain, true, &fenced));
    OK(mcds_lock_try_acquire(fenced, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_fencing_token(fenced, &t1));
    OK(mcds_lock_try_acquire(plain, &acquired)); /* same lock name: taken */
    EXPECT(!acquired);
    OK(mcds_lock_release(fenced, &released));
    OK(mcds_lock_acquire(fenced, 1000));
    OK(mcds_lock_fencing_token(fenced, &t2));
    EXPECT(t2 > t1 && t1 > 0);
    EXPECT_CODE(mcds_lock_fencing_token(fenced, NULL), MCDS_NULL_ARGUMENT);
    mcds_lock_free(fenced); /* releases */

    /* Owner label: the holder names its host and pid. */
    EXPECT_CODE(mcds_lock_with_owner_label(NULL, "x", &labelled), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_owner_label(plain, NULL, &labelled), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_owner_label(plain, "x", NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_owner_label(plain, "tab\there", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_owner_label(plain, "caf\xc3\xa9", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_owner_label(plain, "\xff", &untouched), MCDS_INVALID_UTF8);
    memset(long_label, 'l', 201);
    long_label[201] = '\0';
    EXPECT_CODE(mcds_lock_with_owner_label(plain, long_label, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(untouched == (mcds_lock *)0x1);
    OK(mcds_lock_with_owner_label(plain, "", &labelled)); /* no label */
    OK(mcds_lock_try_acquire(labelled, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_holder(plain, &holder));
    EXPECT(holder != NULL && strchr(holder, ' ') == NULL);
    mcds_string_free(holder);
    mcds_lock_free(labelled);
    OK(mcds_lock_with_owner_label(plain, "host=c-test pid=42", &labelled));
    OK(mcds_lock_try_acquire(labelled, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_holder(plain, &holder)); /* any handle can ask */
    EXPECT(holder != NULL && strncmp(holder, "host=c-test pid=42 ", 19) == 0 && strlen(holder) > 19);
    mcds_string_free(holder);

    /* Backoff: checked, and used by acquire. */
    EXPECT_CODE(mcds_lock_with_backoff(NULL, 1, 2, &slow), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_backoff(plain, 1, 2, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_backoff(plain, 0, 10, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_backoff(plain, 20, 10, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_lock_with_backoff(plain, 1, 60001, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(untouched == (mcds_lock *)0x1);
    OK(mcds_lock_with_backoff(plain, 5, 20, &slow));
    EXPECT_CODE(mcds_lock_acquire(slow, 60), MCDS_WAIT_TIMEOUT);
    mcds_lock_free(slow);
    OK(mcds_lock_release(labelled, &released));
    EXPECT(released);
    mcds_lock_free(labelled);
    mcds_lock_free(plain);

    /* A lease lost behind the holder's back: extend says so, is_lost turns
     * true, and the handle can take the lock again. */
    OK(mcds_store_with_prefix(store, "table:c-evict:v:", &evictable));
    OK(mcds_lock_new(evictable, "c-lost", 30, &lost));
    OK(mcds_lock_try_acquire(lost, &acquired));
    EXPECT(acquired);
    evict_lost_lock(store);
    OK(mcds_lock_extend(lost, 30, &extended));
    EXPECT(!extended);
    OK(mcds_lock_is_lost(lost, &b));
    EXPECT(b);
    OK(mcds_lock_try_acquire(lost, &acquired)); /* replaces the lost lease */
    EXPECT(acquired);
    OK(mcds_lock_is_lost(lost, &b));
    EXPECT(!b);

    /* Auto-extend: the renewer finds the loss, and is_lost reports it. */
    EXPECT_CODE(mcds_lock_auto_extend(NULL, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_auto_extend(lost, 0), MCDS_INVALID_ARGUMENT);
    OK(mcds_lock_auto_extend(lost, 1)); /* renews every 333 ms */
    OK(mcds_lock_auto_extend(lost, 1)); /* replaces the renewer */
    sleep_ms(400);
    OK(mcds_lock_is_lost(lost, &b));
    EXPECT(!b); /* renewals succeed */
    evict_lost_lock(store);
    for (int i = 0; i < 100; i++) {
        OK(mcds_lock_is_lost(lost, &b));
        if (b) break;
        sleep_ms(50);
    }
    EXPECT(b);
    OK(mcds_lock_release(lost, &released));
    EXPECT(!released);
    /* Free with a renewer running: it stops and the lease is released. */
    OK(mcds_lock_try_acquire(lost, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_auto_extend(lost, 1));
    mcds_lock_free(lost);
    OK(mcds_lock_new(evictable, "c-lost", 30, &lost));
    OK(mcds_lock_try_acquire(lost, &acquired));
    EXPECT(acquired);
    mcds_lock_free(lost);
    mcds_store_free(evictable);

    /* NULL in every position. */
    EXPECT_CODE(mcds_lock_extend(NULL, 1, &b), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_is_lost(NULL, &b), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_fencing_token(NULL, &token), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_owner_token(NULL, &mine), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_holder(NULL, &holder), MCDS_NULL_ARGUMENT);
    OK(mcds_lock_new(store, "c-nulls", 30, &plain));
    OK(mcds_lock_try_acquire(plain, &acquired));
    EXPECT_CODE(mcds_lock_extend(plain, 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_is_lost(plain, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_owner_token(plain, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_lock_holder(plain, NULL), MCDS_NULL_ARGUMENT);
    mcds_lock_free(plain);
}

/* ---- Counters: shadow and view (with a loader callback). ---- */

typedef struct {
    int calls;
    uint64_t total;
    mcds_result fail_with;
} loader_ctx;

static mcds_result db_loader(void *ctx, uint64_t *out_value) {
    loader_ctx *l = ctx;
    l->calls++;
    if (l->fail_with != MCDS_OK) return l->fail_with;
    *out_value = l->total;
    return MCDS_OK;
}

static mcds_result silent_loader(void *ctx, uint64_t *out_value) {
    (void)ctx;
    (void)out_value; /* returns OK without writing: the total is 0 */
    return MCDS_OK;
}

/* A loader that calls back into mcds, on the very handle being loaded. */
static mcds_result reentrant_loader(void *ctx, uint64_t *out_value) {
    mcds_result r = mcds_view_counter_invalidate((const mcds_view_counter *)ctx);
    *out_value = 50;
    return r;
}

static void more_counters(mcds_store *store) {
    mcds_shadow_counter *sh = NULL, *no_sh = (mcds_shadow_counter *)0x1;
    mcds_view_counter *views = NULL, *no_views = (mcds_view_counter *)0x1, *other = NULL;
    loader_ctx db = {0, 1000, MCDS_OK}, failing = {0, 5, MCDS_IO};
    uint64_t v = 0, untouched = 4242;

    OK(mcds_shadow_counter_new(store, "c-visitors", 3600, &sh));
    OK(mcds_shadow_counter_incr(sh, 2, &v));
    EXPECT(v == 2);
    OK(mcds_shadow_counter_incr(sh, 3, &v));
    EXPECT(v == 5);
    OK(mcds_shadow_counter_value(sh, &v));
    EXPECT(v == 0 || v == 5); /* last hour's count (5 only if the hour turned) */
    EXPECT_CODE(mcds_shadow_counter_new(NULL, "x", 60, &no_sh), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_shadow_counter_new(store, NULL, 60, &no_sh), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_shadow_counter_new(store, "x", 60, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_shadow_counter_new(store, "x", 0, &no_sh), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_shadow_counter_new(store, "", 60, &no_sh), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_shadow_counter_new(store, "\xff", 60, &no_sh), MCDS_INVALID_UTF8);
    EXPECT(no_sh == (mcds_shadow_counter *)0x1);
    EXPECT_CODE(mcds_shadow_counter_incr(NULL, 1, &v), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_shadow_counter_incr(sh, 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_shadow_counter_value(NULL, &v), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_shadow_counter_value(sh, NULL), MCDS_NULL_ARGUMENT);
    mcds_shadow_counter_free(sh);
    mcds_shadow_counter_free(NULL);

    OK(mcds_view_counter_new(store, "c-photo-9", 0, &views));
    /* A miss: the loader runs once, the cache is seeded with total + delta. */
    OK(mcds_view_counter_view(views, 1, db_loader, &db, &v));
    EXPECT(v == 1001 && db.calls == 1);
    /* A hit: no loader call. */
    OK(mcds_view_counter_view(views, 2, db_loader, &db, &v));
    EXPECT(v == 1003 && db.calls == 1);
    OK(mcds_view_counter_get(views, db_loader, &db, &v));
    EXPECT(v == 1003 && db.calls == 1);
    /* NULL loader: refused even on a hit. */
    EXPECT_CODE(mcds_view_counter_view(views, 1, NULL, &db, &untouched), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_get(views, NULL, &db, &untouched), MCDS_NULL_ARGUMENT);
    EXPECT(untouched == 4242);
    /* Invalidate: the next get loads (and seeds) again. */
    OK(mcds_view_counter_invalidate(views));
    db.total = 2000;
    OK(mcds_view_counter_get(views, db_loader, &db, &v));
    EXPECT(v == 2000 && db.calls == 2);
    OK(mcds_view_counter_view(views, 1, db_loader, &db, &v));
    EXPECT(v == 2001 && db.calls == 2);
    /* A failing loader: MCDS_CALLBACK_FAILED naming its code, nothing cached. */
    OK(mcds_view_counter_invalidate(views));
    EXPECT_CODE(mcds_view_counter_view(views, 1, db_loader, &failing, &untouched), MCDS_CALLBACK_FAILED);
    EXPECT(strstr(mcds_last_error_message(), "MCDS_IO") != NULL);
    EXPECT_CODE(mcds_view_counter_get(views, db_loader, &failing, &untouched), MCDS_CALLBACK_FAILED);
    failing.fail_with = 12345; /* any code, even one mcds does not know */
    EXPECT_CODE(mcds_view_counter_get(views, db_loader, &failing, &untouched), MCDS_CALLBACK_FAILED);
    EXPECT(strstr(mcds_last_error_message(), "12345") != NULL);
    EXPECT(failing.calls == 3 && untouched == 4242);
    OK(mcds_view_counter_get(views, db_loader, &db, &v));
    EXPECT(v == 2000 && db.calls == 3); /* the failures cached nothing */
    /* A loader that ignores ctx (NULL) and writes nothing: 0. */
    OK(mcds_view_counter_new(store, "c-photo-10", 60, &other));
    OK(mcds_view_counter_view(other, 1, silent_loader, NULL, &v));
    EXPECT(v == 1);
    OK(mcds_view_counter_invalidate(other));
    OK(mcds_view_counter_view(other, 1, reentrant_loader, other, &v));
    EXPECT(v == 51);
    mcds_view_counter_free(other);

    EXPECT_CODE(mcds_view_counter_new(NULL, "x", 0, &no_views), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_new(store, NULL, 0, &no_views), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_new(store, "x", 0, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_new(store, "", 0, &no_views), MCDS_INVALID_KEY);
    EXPECT(no_views == (mcds_view_counter *)0x1);
    EXPECT_CODE(mcds_view_counter_view(NULL, 1, db_loader, &db, &v), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_view(views, 1, db_loader, &db, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_get(NULL, db_loader, &db, &v), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_get(views, db_loader, &db, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_view_counter_invalidate(NULL), MCDS_NULL_ARGUMENT);
    EXPECT(db.calls == 3);
    mcds_view_counter_free(views);
    mcds_view_counter_free(NULL);
}

/* ---- Sets: batches, compaction, sharded sets, integer arrays. ---- */

static size_t list_len(const mcds_bytes_list *list) {
    size_t n = 0;
    OK(mcds_bytes_list_len(list, &n));
    return n;
}

static void more_sets(mcds_store *store) {
    mcds_set *s = NULL;
    mcds_sharded_set *sh = NULL, *no_sh = (mcds_sharded_set *)0x1;
    mcds_int_array *a = NULL, *no_a = (mcds_int_array *)0x1;
    mcds_bytes_list *list = NULL;
    mcds_int_list *ints = NULL;
    const uint8_t *members[4] = {BYTES("ann"), BYTES("bob"), NULL, BYTES("\0\r\n ")};
    size_t lens[4] = {3, 3, 0, 4};
    bool found = false, rewritten = false;
    const uint8_t *data = NULL;
    const int64_t *values = NULL;
    size_t n = 0, len = 0;
    int64_t x = 0;

    /* Batch add: four members (one empty, one binary) in one call. */
    OK(mcds_set_new(store, "c-batch", &s));
    OK(mcds_set_add_many(s, members, lens, 4));
    OK(mcds_set_members(s, &list));
    EXPECT(list_len(list) == 4);
    OK(mcds_bytes_list_get(list, 3, &data, &len));
    EXPECT(len == 4 && memcmp(data, "\0\r\n ", 4) == 0);
    mcds_bytes_list_free(list);
    OK(mcds_set_remove_many(s, members, lens, 2));
    OK(mcds_set_contains(s, BYTES("ann"), 3, &found));
    EXPECT(!found);
    OK(mcds_set_add_many(s, NULL, NULL, 0)); /* nothing */
    OK(mcds_set_remove_many(s, NULL, NULL, 0));
    /* Bad batches write nothing. */
    EXPECT_CODE(mcds_set_add_many(NULL, members, lens, 4), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_add_many(s, NULL, lens, 4), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_add_many(s, members, NULL, 4), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_add_many(s, members, lens, SIZE_MAX), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_set_remove_many(NULL, members, lens, 4), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_remove_many(s, NULL, lens, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_remove_many(s, members, NULL, 1), MCDS_NULL_ARGUMENT);
    {
        const uint8_t *with_null[2] = {BYTES("cy"), NULL};
        size_t null_lens[2] = {2, 5}, huge_lens[2] = {2, SIZE_MAX};
        EXPECT_CODE(mcds_set_add_many(s, with_null, null_lens, 2), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "members[1]") != NULL);
        EXPECT_CODE(mcds_set_add_many(s, members, huge_lens, 2), MCDS_INVALID_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "members[1]") != NULL);
        OK(mcds_set_contains(s, BYTES("cy"), 2, &found));
        EXPECT(!found);
    }
    /* Compact: the removed members' tokens go. */
    OK(mcds_set_compact(s, &rewritten));
    EXPECT(rewritten);
    OK(mcds_set_compact(s, &rewritten));
    EXPECT(!rewritten);
    OK(mcds_set_members(s, &list));
    EXPECT(list_len(list) == 2);
    mcds_bytes_list_free(list);
    EXPECT_CODE(mcds_set_compact(NULL, &rewritten), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_compact(s, NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_set_clear(s));
    OK(mcds_set_members(s, &list));
    EXPECT(list_len(list) == 0);
    mcds_bytes_list_free(list);
    OK(mcds_set_compact(s, &rewritten)); /* a missing set: nothing to do */
    EXPECT(!rewritten);
    EXPECT_CODE(mcds_set_clear(NULL), MCDS_NULL_ARGUMENT);
    mcds_set_free(s);

    /* Sharded set. */
    EXPECT_CODE(mcds_sharded_set_new(NULL, "x", 4, &no_sh), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_new(store, NULL, 4, &no_sh), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_new(store, "x", 4, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_new(store, "x", 0, &no_sh), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_new(store, "x", 4097, &no_sh), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_new(store, "x", UINT32_MAX, &no_sh), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_new(store, "", 4, &no_sh), MCDS_INVALID_KEY);
    EXPECT(no_sh == (mcds_sharded_set *)0x1);
    OK(mcds_sharded_set_new(store, "c-online", 8, &sh));
    {
        char names[100][8];
        const uint8_t *many[100];
        size_t many_lens[100];
        for (int i = 0; i < 100; i++) {
            many_lens[i] = (size_t)snprintf(names[i], sizeof names[i], "u%d", i);
            many[i] = BYTES(names[i]);
        }
        OK(mcds_sharded_set_add_many(sh, many, many_lens, 100));
        OK(mcds_sharded_set_remove_many(sh, many, many_lens, 50));
    }
    OK(mcds_sharded_set_add(sh, BYTES("ann"), 3));
    OK(mcds_sharded_set_add(sh, NULL, 0));
    OK(mcds_sharded_set_remove(sh, NULL, 0));
    OK(mcds_sharded_set_remove(sh, BYTES("u99"), 3));
    OK(mcds_sharded_set_contains(sh, BYTES("ann"), 3, &found));
    EXPECT(found);
    OK(mcds_sharded_set_contains(sh, BYTES("u1"), 2, &found));
    EXPECT(!found);
    OK(mcds_sharded_set_contains(sh, BYTES("u50"), 3, &found));
    EXPECT(found);
    OK(mcds_sharded_set_members(sh, &list));
    EXPECT(list_len(list) == 50); /* u50..u98 and ann */
    mcds_bytes_list_free(list);
    OK(mcds_sharded_set_compact(sh));
    OK(mcds_sharded_set_members(sh, &list));
    EXPECT(list_len(list) == 50);
    mcds_bytes_list_free(list);
    OK(mcds_sharded_set_add_many(sh, NULL, NULL, 0));
    EXPECT_CODE(mcds_sharded_set_add(NULL, BYTES("a"), 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_add(sh, NULL, 1), MCDS_NULL_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "member is NULL") != NULL);
    EXPECT_CODE(mcds_sharded_set_add(sh, BYTES("a"), SIZE_MAX), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_remove(NULL, BYTES("a"), 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_remove(sh, NULL, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_add_many(NULL, members, lens, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_add_many(sh, NULL, lens, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_add_many(sh, members, NULL, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_add_many(sh, members, lens, SIZE_MAX), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_remove_many(NULL, members, lens, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_remove_many(sh, NULL, lens, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_remove_many(sh, members, NULL, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_contains(NULL, BYTES("a"), 1, &found), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_contains(sh, NULL, 1, &found), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_contains(sh, BYTES("a"), 1, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_members(NULL, &list), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_members(sh, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_compact(NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_sharded_set_clear(NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_sharded_set_clear(sh));
    OK(mcds_sharded_set_members(sh, &list));
    EXPECT(list_len(list) == 0);
    mcds_bytes_list_free(list);
    mcds_sharded_set_free(sh);
    mcds_sharded_set_free(NULL);

    /* Integer array. */
    EXPECT_CODE(mcds_int_array_new(NULL, "x", &no_a), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_array_new(store, NULL, &no_a), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_array_new(store, "x", NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_array_new(store, "", &no_a), MCDS_INVALID_KEY);
    EXPECT(no_a == (mcds_int_array *)0x1);
    OK(mcds_int_array_new(store, "c-ids", &a));
    {
        const int64_t add[] = {3, -1, 7, INT64_MIN, INT64_MAX, 3};
        const int64_t drop[] = {3};
        OK(mcds_int_array_add(a, add, 6));
        OK(mcds_int_array_remove(a, drop, 1));
        OK(mcds_int_array_add(a, NULL, 0));
        OK(mcds_int_array_remove(a, NULL, 0));
        EXPECT_CODE(mcds_int_array_add(NULL, add, 1), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_int_array_add(a, NULL, 1), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_int_array_add(a, add, SIZE_MAX), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_int_array_remove(NULL, add, 1), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_int_array_remove(a, NULL, 1), MCDS_NULL_ARGUMENT);
    }
    OK(mcds_int_array_contains(a, 7, &found));
    EXPECT(found);
    OK(mcds_int_array_contains(a, 3, &found));
    EXPECT(!found);
    EXPECT_CODE(mcds_int_array_contains(NULL, 7, &found), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_array_contains(a, 7, NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_int_array_members(a, &ints));
    OK(mcds_int_list_len(ints, &n));
    EXPECT(n == 4);
    OK(mcds_int_list_data(ints, &values, &len));
    EXPECT(len == 4 && values[0] == -1 && values[1] == 7 && values[2] == INT64_MIN && values[3] == INT64_MAX);
    OK(mcds_int_list_get(ints, 2, &x));
    EXPECT(x == INT64_MIN);
    x = 99;
    EXPECT_CODE(mcds_int_list_get(ints, 4, &x), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_int_list_get(ints, SIZE_MAX, &x), MCDS_INVALID_ARGUMENT);
    EXPECT(x == 99);
    EXPECT_CODE(mcds_int_list_len(NULL, &n), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_list_len(ints, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_list_get(NULL, 0, &x), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_list_get(ints, 0, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_list_data(NULL, &values, &len), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_list_data(ints, NULL, &len), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_list_data(ints, &values, NULL), MCDS_NULL_ARGUMENT);
    mcds_int_list_free(ints);
    EXPECT_CODE(mcds_int_array_members(NULL, &ints), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_int_array_members(a, NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_int_array_clear(a));
    EXPECT_CODE(mcds_int_array_clear(NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_int_array_members(a, &ints));
    OK(mcds_int_list_data(ints, &values, &len));
    EXPECT(len == 0 && values != NULL);
    mcds_int_list_free(ints);
    mcds_int_list_free(NULL);
    /* A member that is not an integer (another program wrote the key):
     * MCDS_CORRUPT. The array lives in a store prefixed "table:c-raw:v:",
     * so its log is also the entry of the member "ints:c-ids:log" of the
     * table "c-raw", whose value is written here by hand. */
    {
        mcds_store *raw = NULL;
        mcds_int_array *planted = NULL;
        mcds_table *t = NULL;
        mcds_int_list *no_ints = (mcds_int_list *)0x1;
        const char *member = "ints:c-ids:log", *log = "+12 +twelve ";
        OK(mcds_store_with_prefix(store, "table:c-raw:v:", &raw));
        OK(mcds_int_array_new(raw, "c-ids", &planted));
        OK(mcds_table_new(store, "c-raw", &t));
        OK(mcds_table_set(t, BYTES(member), strlen(member), BYTES(log), strlen(log)));
        EXPECT_CODE(mcds_int_array_members(planted, &no_ints), MCDS_CORRUPT);
        EXPECT(strstr(mcds_last_error_message(), "twelve") != NULL);
        EXPECT(no_ints == (mcds_int_list *)0x1);
        OK(mcds_int_array_contains(planted, 12, &found));
        EXPECT(found);
        mcds_table_free(t);
        mcds_int_array_free(planted);
        mcds_store_free(raw);
    }
    mcds_int_array_free(a);
}

/* ---- Event log feed, table entries. ---- */

static void feeds_and_entries(mcds_store *store) {
    mcds_log *log = NULL;
    mcds_event_list *events = NULL, *no_events = (mcds_event_list *)0x1;
    mcds_cursor start = {0, 0}, cur = {0, 0}, next = {0, 0}, kept = {7, 7};
    mcds_table *t = NULL;
    mcds_bytes_list *members = NULL, *values = NULL;
    mcds_bytes_list *no_list = (mcds_bytes_list *)0x1;
    uint64_t at = 0, a_at = 0;
    size_t n = 0, len = 0;
    const uint8_t *data = NULL;

    OK(mcds_log_new(store, "c-feed", 60, 11, &log));
    OK(mcds_log_put(log, BYTES("A"), 1, &a_at));
    /* A late event: a second earlier. */
    OK(mcds_log_put_at(log, a_at - 1000, BYTES("early"), 5));
    OK(mcds_log_put_at(log, a_at, NULL, 0)); /* an empty payload */
    EXPECT_CODE(mcds_log_put_at(log, 0, BYTES("x"), 1), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_log_put_at(log, a_at + 3600000, BYTES("x"), 1), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_log_put_at(log, UINT64_MAX, BYTES("x"), 1), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_log_put_at(NULL, a_at, BYTES("x"), 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_log_put_at(log, a_at, NULL, 1), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_log_put_at(log, a_at, BYTES("x"), SIZE_MAX), MCDS_INVALID_ARGUMENT);

    /* since: the cursor round-trips through C. */
    OK(mcds_log_since(log, &start, &events, &cur));
    OK(mcds_event_list_len(events, &n));
    EXPECT(n == 3);
    OK(mcds_event_list_get(events, 0, &at, &data, &len));
    EXPECT(at == a_at - 1000 && len == 5 && memcmp(data, "early", 5) == 0);
    mcds_event_list_free(events);
    EXPECT(cur.at_ms == a_at && cur.seen_at_ms == 2);
    OK(mcds_log_put(log, BYTES("B"), 1, &at));
    /* cursor and out_next may be the same struct. */
    next = cur;
    OK(mcds_log_since(log, &next, &events, &next));
    OK(mcds_event_list_len(events, &n));
    EXPECT(n == 1);
    OK(mcds_event_list_get(events, 0, &at, &data, &len));
    EXPECT(len == 1 && data[0] == 'B');
    mcds_event_list_free(events);
    EXPECT(next.at_ms == at && next.seen_at_ms >= 1);
    cur = next;
    OK(mcds_log_since(log, &cur, &events, &next));
    OK(mcds_event_list_len(events, &n));
    EXPECT(n == 0 && next.at_ms == cur.at_ms && next.seen_at_ms == cur.seen_at_ms);
    mcds_event_list_free(events);
    {
        /* After a timestamp: {t + 1, 0}. */
        mcds_cursor after = {a_at, 0}, huge = {0, UINT64_MAX};
        OK(mcds_log_since(log, &after, &events, &next));
        OK(mcds_event_list_len(events, &n));
        EXPECT(n >= 3); /* A, the empty one, B */
        mcds_event_list_free(events);
        if (sizeof(size_t) < sizeof(uint64_t)) {
            EXPECT_CODE(mcds_log_since(log, &huge, &no_events, &kept), MCDS_INVALID_ARGUMENT);
        } else {
            OK(mcds_log_since(log, &huge, &events, &next)); /* skips everything at 0 */
            mcds_event_list_free(events);
        }
    }
    EXPECT_CODE(mcds_log_since(NULL, &start, &no_events, &kept), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_log_since(log, NULL, &no_events, &kept), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_log_since(log, &start, NULL, &kept), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_log_since(log, &start, &no_events, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(no_events == (mcds_event_list *)0x1 && kept.at_ms == 7 && kept.seen_at_ms == 7);
    mcds_log_free(log);

    /* Table entries: two parallel lists. */
    OK(mcds_table_new(store, "c-roles", &t));
    OK(mcds_table_set(t, BYTES("ann"), 3, BYTES("admin"), 5));
    OK(mcds_table_set(t, BYTES("bob"), 3, NULL, 0));
    OK(mcds_table_set(t, BYTES("\x01\xff"), 2, BYTES("\0bin"), 4));
    OK(mcds_table_entries(t, &members, &values));
    EXPECT(list_len(members) == 3 && list_len(values) == 3);
    OK(mcds_bytes_list_get(members, 0, &data, &len));
    EXPECT(len == 3 && memcmp(data, "ann", 3) == 0);
    OK(mcds_bytes_list_get(values, 0, &data, &len));
    EXPECT(len == 5 && memcmp(data, "admin", 5) == 0);
    OK(mcds_bytes_list_get(values, 1, &data, &len));
    EXPECT(len == 0);
    OK(mcds_bytes_list_get(members, 2, &data, &len));
    EXPECT(len == 2 && data[0] == 0x01 && data[1] == 0xff);
    OK(mcds_bytes_list_get(values, 2, &data, &len));
    EXPECT(len == 4 && memcmp(data, "\0bin", 4) == 0);
    mcds_bytes_list_free(members);
    mcds_bytes_list_free(values);
    EXPECT_CODE(mcds_table_entries(NULL, &members, &values), MCDS_NULL_ARGUMENT);
    members = no_list;
    values = no_list;
    EXPECT_CODE(mcds_table_entries(t, NULL, &values), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_table_entries(t, &members, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(members == no_list && values == no_list); /* neither written */
    mcds_table_free(t);
}

/* ---- HyperLogLog: the count of a union, over one store. ---- */

static void hll_union(mcds_store *memory, mcds_store *memcached) {
    mcds_hll *a = NULL, *b = NULL, *elsewhere = NULL, *prefixed = NULL;
    mcds_store *app = NULL;
    bool changed = false;
    uint64_t n = 0, kept = 777;
    char el[16];

    OK(mcds_hll_new(memcached, "c-union-a", &a));
    OK(mcds_hll_new(memcached, "c-union-b", &b));
    OK(mcds_store_with_prefix(memcached, "c-app/", &app));
    OK(mcds_hll_new(app, "c-union-c", &prefixed));
    OK(mcds_hll_new(memory, "c-union-a", &elsewhere));
    for (int i = 0; i < 100; i++) {
        int len = snprintf(el, sizeof el, "e%d", i);
        OK(mcds_hll_add(i < 60 ? a : b, BYTES(el), (size_t)len, &changed));
        OK(mcds_hll_add(prefixed, BYTES(el), (size_t)len, &changed));
    }
    {
        const mcds_hll *both[] = {a, b};
        const mcds_hll *three[] = {a, b, prefixed}; /* a prefixed handle shares the store */
        const mcds_hll *mixed[] = {a, elsewhere};
        const mcds_hll *with_null[] = {a, NULL};
        OK(mcds_hll_count_union(both, 2, &n));
        EXPECT(n >= 95 && n <= 105);
        OK(mcds_hll_count_union(three, 3, &n));
        EXPECT(n >= 95 && n <= 105);
        OK(mcds_hll_count(a, &n)); /* nothing was written */
        EXPECT(n >= 57 && n <= 63);
        OK(mcds_hll_count_union(both, 1, &n));
        EXPECT(n >= 57 && n <= 63);
        OK(mcds_hll_count_union(NULL, 0, &n));
        EXPECT(n == 0);
        EXPECT_CODE(mcds_hll_count_union(NULL, 2, &kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_hll_count_union(with_null, 2, &kept), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "sketches[1]") != NULL);
        EXPECT_CODE(mcds_hll_count_union(both, 2, NULL), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_hll_count_union(both, SIZE_MAX, &kept), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_hll_count_union(mixed, 2, &kept), MCDS_INVALID_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "another store") != NULL);
        EXPECT(kept == 777);
        /* merge: the sources share a store; the target may be elsewhere. */
        EXPECT_CODE(mcds_hll_merge(a, mixed, 2), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_hll_merge(a, both, SIZE_MAX), MCDS_INVALID_ARGUMENT);
        OK(mcds_hll_merge(elsewhere, both, 2));
        OK(mcds_hll_count(elsewhere, &n));
        EXPECT(n >= 95 && n <= 105);
    }
    mcds_hll_free(a);
    mcds_hll_free(b);
    mcds_hll_free(prefixed);
    mcds_hll_free(elsewhere);
    mcds_store_free(app);
}

/* ---- Counter reset and batches, sketch batches and clear, TTL handles. ---- */

/* Plants the bytes `value` under the counter "c-nn" of `raw` (a store
 * prefixed "table:c-nn:v:"): the counter's key is also the entry key of the
 * member "counter:c-nn:value" of the table "c-nn". */
static void plant_counter(mcds_store *store, const char *value) {
    mcds_table *t = NULL;
    const char *member = "counter:c-nn:value";
    OK(mcds_table_new(store, "c-nn", &t));
    OK(mcds_table_set(t, BYTES(member), strlen(member), BYTES(value), strlen(value)));
    mcds_table_free(t);
}

static void counter_batches(mcds_store *store, mcds_store *elsewhere) {
    mcds_counter *a = NULL, *b = NULL, *nn = NULL, *far = NULL, *prefixed = NULL;
    mcds_store *raw = NULL, *app = NULL;
    uint64_t v = 0, values[4] = {777, 777, 777, 777};
    mcds_result results[4] = {777, 777, 777, 777};

    /* Reset: the counter reads 0 again, and increments start over. */
    OK(mcds_counter_new(store, "c-batch-a", &a));
    OK(mcds_counter_new(store, "c-batch-b", &b));
    OK(mcds_counter_incr(a, 9, &v));
    OK(mcds_counter_reset(a));
    OK(mcds_counter_get(a, &v));
    EXPECT(v == 0);
    OK(mcds_counter_reset(a)); /* a missing counter: fine */
    OK(mcds_counter_incr(a, 2, &v));
    EXPECT(v == 2);
    EXPECT_CODE(mcds_counter_reset(NULL), MCDS_NULL_ARGUMENT);

    /* incr_many: one batch, a counter twice, a prefixed handle's counter too. */
    OK(mcds_store_with_prefix(store, "c-app/", &app));
    OK(mcds_counter_new(app, "c-batch-a", &prefixed));
    {
        const mcds_counter *batch[4] = {a, b, a, prefixed};
        const uint64_t deltas[4] = {10, 1, 5, 3};
        OK(mcds_counter_incr_many(batch, deltas, 4, values, results));
        EXPECT(values[0] == 12 && values[1] == 1 && values[2] == 17 && values[3] == 3);
        EXPECT(results[0] == MCDS_OK && results[1] == MCDS_OK && results[2] == MCDS_OK &&
               results[3] == MCDS_OK);
        OK(mcds_counter_get(a, &v));
        EXPECT(v == 17);
        OK(mcds_counter_get(prefixed, &v));
        EXPECT(v == 3);
        OK(mcds_counter_incr_many(NULL, NULL, 0, NULL, NULL)); /* nothing */
        OK(mcds_counter_incr_many(batch, deltas, 0, NULL, NULL));
    }
    /* One op fails (a value that is no number): the others are applied, the
     * return is the failing op's code. */
    OK(mcds_store_with_prefix(store, "table:c-nn:v:", &raw));
    OK(mcds_counter_new(raw, "c-nn", &nn));
    plant_counter(store, "not a number");
    {
        const mcds_counter *batch[3] = {a, nn, b};
        const uint64_t deltas[3] = {1, 1, 1};
        EXPECT_CODE(mcds_counter_incr_many(batch, deltas, 3, values, results), MCDS_NON_NUMERIC);
        EXPECT(strstr(mcds_last_error_message(), "c-nn") != NULL);
        EXPECT(values[0] == 18 && values[1] == 0 && values[2] == 2);
        EXPECT(results[0] == MCDS_OK && results[1] == MCDS_NON_NUMERIC && results[2] == MCDS_OK);
        OK(mcds_counter_get(b, &v));
        EXPECT(v == 2);
    }
    /* Refused calls write nothing and send nothing. */
    OK(mcds_counter_new(elsewhere, "c-batch-far", &far));
    {
        const mcds_counter *mixed[2] = {a, far};
        const mcds_counter *with_null[2] = {a, NULL};
        const mcds_counter *pair[2] = {a, b};
        const uint64_t deltas[2] = {100, 100};
        values[0] = values[1] = 777;
        results[0] = results[1] = 777;
        EXPECT_CODE(mcds_counter_incr_many(mixed, deltas, 2, values, results), MCDS_INVALID_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "counters[1]") != NULL);
        EXPECT(strstr(mcds_last_error_message(), "another store") != NULL);
        EXPECT_CODE(mcds_counter_incr_many(with_null, deltas, 2, values, results), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "counters[1] is NULL") != NULL);
        EXPECT_CODE(mcds_counter_incr_many(NULL, deltas, 2, values, results), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_counter_incr_many(pair, NULL, 2, values, results), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_counter_incr_many(pair, deltas, 2, NULL, results), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "out_values is NULL") != NULL);
        EXPECT_CODE(mcds_counter_incr_many(pair, deltas, 2, values, NULL), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "out_results is NULL") != NULL);
        EXPECT_CODE(mcds_counter_incr_many(pair, deltas, SIZE_MAX, values, results), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_counter_incr_many(pair, deltas, 100001, values, results), MCDS_INVALID_ARGUMENT);
        EXPECT(values[0] == 777 && values[1] == 777 && results[0] == 777 && results[1] == 777);
        OK(mcds_counter_get(a, &v));
        EXPECT(v == 18);
        OK(mcds_counter_get(far, &v));
        EXPECT(v == 0);
    }
    mcds_counter_free(a);
    mcds_counter_free(b);
    mcds_counter_free(nn);
    mcds_counter_free(far);
    mcds_counter_free(prefixed);
    mcds_store_free(raw);
    mcds_store_free(app);
}

#define BATCH 50

static void sketch_batches(mcds_store *store) {
    mcds_bloom *bl = NULL, *other = NULL;
    mcds_hll *h = NULL;
    char names[2 * BATCH][8];
    const uint8_t *elements[2 * BATCH + 2];
    size_t lens[2 * BATCH + 2];
    bool contained[2 * BATCH + 2], one = false, changed = false;
    size_t added = 777;
    uint64_t n = 0;

    /* 0..BATCH-1 are added, BATCH..2*BATCH-1 are not; then "ann" (added
     * alone first) and the empty element. */
    for (int i = 0; i < 2 * BATCH; i++) {
        lens[i] = (size_t)snprintf(names[i], sizeof names[i], "x%d", i);
        elements[i] = BYTES(names[i]);
    }
    elements[2 * BATCH] = BYTES("ann");
    lens[2 * BATCH] = 3;
    elements[2 * BATCH + 1] = NULL;
    lens[2 * BATCH + 1] = 0;

    OK(mcds_bloom_new(store, "c-bloom-batch", 10000, 0.01, &bl));
    OK(mcds_bloom_add(bl, BYTES("ann"), 3, &one));
    EXPECT(one);
    {
        /* x0..x49, x0 again, ann (old), the empty element: 51 new. */
        const uint8_t *batch[BATCH + 3];
        size_t batch_lens[BATCH + 3];
        memcpy(batch, elements, BATCH * sizeof batch[0]);
        memcpy(batch_lens, lens, BATCH * sizeof batch_lens[0]);
        batch[BATCH] = elements[0];
        batch_lens[BATCH] = lens[0];
        batch[BATCH + 1] = elements[2 * BATCH];
        batch_lens[BATCH + 1] = lens[2 * BATCH];
        batch[BATCH + 2] = NULL;
        batch_lens[BATCH + 2] = 0;
        OK(mcds_bloom_add_many(bl, batch, batch_lens, BATCH + 3, &added));
        EXPECT(added == BATCH + 1);
        OK(mcds_bloom_add_many(bl, batch, batch_lens, BATCH + 3, &added));
        EXPECT(added == 0);
    }
    /* contains_many agrees with contains, element by element. */
    memset(contained, 0, sizeof contained);
    OK(mcds_bloom_contains_many(bl, elements, lens, 2 * BATCH + 2, contained));
    {
        int agree = 0, positives = 0;
        for (int i = 0; i < 2 * BATCH + 2; i++) {
            OK(mcds_bloom_contains(bl, elements[i], lens[i], &one));
            agree += one == contained[i];
            positives += contained[i];
        }
        EXPECT(agree == 2 * BATCH + 2);
        EXPECT(positives >= BATCH + 2 && positives <= BATCH + 4); /* few false positives */
        for (int i = 0; i < BATCH; i++) EXPECT(contained[i]);
        EXPECT(contained[2 * BATCH] && contained[2 * BATCH + 1]);
    }
    /* add_many agrees with add: the not-yet-added half, one at a time. */
    {
        size_t one_by_one = 0;
        for (int i = BATCH; i < 2 * BATCH; i++) {
            OK(mcds_bloom_contains(bl, elements[i], lens[i], &one));
            OK(mcds_bloom_add(bl, elements[i], lens[i], &changed));
            one_by_one += changed;
            EXPECT(changed != one);
        }
        /* The same adds again, in batches, from the same start. */
        OK(mcds_bloom_clear(bl));
        OK(mcds_bloom_add_many(bl, elements, lens, BATCH, &added));
        EXPECT(added == BATCH);
        OK(mcds_bloom_add_many(bl, elements + 2 * BATCH, lens + 2 * BATCH, 2, &added));
        EXPECT(added == 2);
        OK(mcds_bloom_add_many(bl, elements + BATCH, lens + BATCH, BATCH, &added));
        EXPECT(added == one_by_one && one_by_one > BATCH - 3);
    }
    OK(mcds_bloom_add_many(bl, NULL, NULL, 0, &added));
    EXPECT(added == 0);
    OK(mcds_bloom_contains_many(bl, NULL, NULL, 0, NULL));
    /* Clear empties it. */
    OK(mcds_bloom_clear(bl));
    OK(mcds_bloom_contains_many(bl, elements, lens, 2 * BATCH + 2, contained));
    {
        int positives = 0;
        for (int i = 0; i < 2 * BATCH + 2; i++) positives += contained[i];
        EXPECT(positives == 0);
    }
    OK(mcds_bloom_clear(bl)); /* already empty: fine */
    /* Bad input: nothing written. */
    {
        const uint8_t *with_null[2] = {BYTES("cy"), NULL};
        size_t null_lens[2] = {2, 5}, huge_lens[2] = {2, SIZE_MAX};
        bool kept[2] = {true, true};
        added = 777;
        EXPECT_CODE(mcds_bloom_add_many(NULL, elements, lens, 2, &added), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_add_many(bl, NULL, lens, 2, &added), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_add_many(bl, elements, NULL, 2, &added), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_add_many(bl, elements, lens, 2, NULL), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_add_many(bl, with_null, null_lens, 2, &added), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "elements[1] is NULL") != NULL);
        EXPECT_CODE(mcds_bloom_add_many(bl, elements, huge_lens, 2, &added), MCDS_INVALID_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "elements[1]") != NULL);
        EXPECT_CODE(mcds_bloom_add_many(bl, elements, lens, SIZE_MAX, &added), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_bloom_add_many(bl, elements, lens, 1000001, &added), MCDS_INVALID_ARGUMENT);
        EXPECT(added == 777);
        EXPECT_CODE(mcds_bloom_contains_many(NULL, elements, lens, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_contains_many(bl, NULL, lens, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_contains_many(bl, elements, NULL, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_contains_many(bl, elements, lens, 2, NULL), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "out_contained is NULL") != NULL);
        EXPECT_CODE(mcds_bloom_contains_many(bl, with_null, null_lens, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_bloom_contains_many(bl, elements, huge_lens, 2, kept), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_bloom_contains_many(bl, elements, lens, SIZE_MAX, kept), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_bloom_contains_many(bl, elements, lens, 1000001, kept), MCDS_INVALID_ARGUMENT);
        EXPECT(kept[0] && kept[1]);
        EXPECT_CODE(mcds_bloom_clear(NULL), MCDS_NULL_ARGUMENT);
        OK(mcds_bloom_contains(bl, BYTES("cy"), 2, &one));
        EXPECT(!one); /* the refused batches added nothing */
        /* Reopened with other parameters: refused, not misread. */
        OK(mcds_bloom_add(bl, BYTES("ann"), 3, &one));
        OK(mcds_bloom_new(store, "c-bloom-batch", 500, 0.01, &other));
        EXPECT_CODE(mcds_bloom_add_many(other, elements, lens, 2, &added), MCDS_CORRUPT);
        EXPECT_CODE(mcds_bloom_contains_many(other, elements, lens, 2, kept), MCDS_CORRUPT);
        EXPECT(added == 777 && kept[0] && kept[1]);
    }
    mcds_bloom_free(bl);
    mcds_bloom_free(other);

    /* HyperLogLog: a batch in one update, then clear. */
    OK(mcds_hll_new(store, "c-hll-batch", &h));
    OK(mcds_hll_add_many(h, elements, lens, 2 * BATCH, &changed));
    EXPECT(changed);
    OK(mcds_hll_count(h, &n));
    EXPECT(n >= 2 * BATCH - 3 && n <= 2 * BATCH + 3);
    OK(mcds_hll_add_many(h, elements, lens, BATCH, &changed));
    EXPECT(!changed);
    changed = true;
    OK(mcds_hll_add_many(h, NULL, NULL, 0, &changed));
    EXPECT(!changed);
    {
        /* The same estimate as one add at a time. */
        mcds_hll *single = NULL;
        uint64_t m = 0;
        OK(mcds_hll_new(store, "c-hll-single", &single));
        for (int i = 0; i < 2 * BATCH; i++) {
            OK(mcds_hll_add(single, elements[i], lens[i], &changed));
        }
        OK(mcds_hll_count(single, &m));
        EXPECT(m == n);
        mcds_hll_free(single);
    }
    OK(mcds_hll_clear(h));
    OK(mcds_hll_count(h, &n));
    EXPECT(n == 0);
    OK(mcds_hll_clear(h)); /* already empty: fine */
    {
        const uint8_t *with_null[2] = {BYTES("cy"), NULL};
        size_t null_lens[2] = {2, 5}, huge_lens[2] = {2, SIZE_MAX};
        changed = true;
        EXPECT_CODE(mcds_hll_add_many(NULL, elements, lens, 2, &changed), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_hll_add_many(h, NULL, lens, 2, &changed), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_hll_add_many(h, elements, NULL, 2, &changed), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_hll_add_many(h, elements, lens, 2, NULL), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_hll_add_many(h, with_null, null_lens, 2, &changed), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "elements[1] is NULL") != NULL);
        EXPECT_CODE(mcds_hll_add_many(h, elements, huge_lens, 2, &changed), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_hll_add_many(h, elements, lens, SIZE_MAX, &changed), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_hll_add_many(h, elements, lens, 1000001, &changed), MCDS_INVALID_ARGUMENT);
        EXPECT(changed);
        EXPECT_CODE(mcds_hll_clear(NULL), MCDS_NULL_ARGUMENT);
        OK(mcds_hll_count(h, &n));
        EXPECT(n == 0); /* the refused batches added nothing */
    }
    mcds_hll_free(h);
}

/* Handles on one store: `gone` reads what a 2 s TTL handle wrote, `kept`
 * what the handle it was derived from wrote afterwards (no TTL: deriving
 * left it unchanged); the counters `zero`, `long_ttl` and `max_ttl` were
 * written with a TTL of 0, 40 days and UINT32_MAX seconds. */
typedef struct {
    mcds_counter *counter_gone, *counter_kept, *zero, *long_ttl, *max_ttl;
    mcds_set *set_gone, *set_kept;
    mcds_bloom *bloom_gone, *bloom_kept;
    mcds_hll *hll_gone, *hll_kept;
    mcds_bitmap *bitmap_gone, *bitmap_kept;
} ttl_handles;

/* A counter `name` written once through a handle with `ttl_secs`, read
 * back at once through the plain one, which is returned. */
static mcds_counter *counter_with_ttl(mcds_store *store, const char *name, uint32_t ttl_secs) {
    mcds_counter *c = NULL, *derived = NULL;
    uint64_t v = 0;
    OK(mcds_counter_new(store, name, &c));
    OK(mcds_counter_with_ttl(c, ttl_secs, &derived));
    OK(mcds_counter_incr(derived, 1, &v));
    OK(mcds_counter_get(c, &v)); /* one counter, any handle */
    EXPECT(v == 1);
    mcds_counter_free(derived);
    return c;
}

/* Writes through TTL handles and through the originals; each write is
 * read back at once. */
static void ttl_write(mcds_store *store, ttl_handles *t) {
    mcds_counter *no_c = (mcds_counter *)0x1, *c_ttl = NULL;
    mcds_set *no_s = (mcds_set *)0x1, *s_ttl = NULL;
    mcds_bloom *no_bl = (mcds_bloom *)0x1, *bl_ttl = NULL;
    mcds_hll *no_h = (mcds_hll *)0x1, *h_ttl = NULL;
    mcds_bitmap *no_bm = (mcds_bitmap *)0x1, *bm_ttl = NULL;
    uint64_t v = 0;
    bool b = false;

    t->counter_gone = counter_with_ttl(store, "c-ttl", 2);
    t->zero = counter_with_ttl(store, "c-ttl-zero", 0); /* never, as memcached's 0 */
    /* Over 30 days: sent to memcached as an absolute time, not read as one
     * (which would expire the item at once). */
    t->long_ttl = counter_with_ttl(store, "c-ttl-long", 40 * 86400);
    t->max_ttl = counter_with_ttl(store, "c-ttl-max", UINT32_MAX);
    OK(mcds_counter_new(store, "c-ttl-kept", &t->counter_kept));
    OK(mcds_counter_with_ttl(t->counter_kept, 2, &c_ttl));
    OK(mcds_counter_incr(t->counter_kept, 1, &v));
    EXPECT_CODE(mcds_counter_with_ttl(NULL, 2, &no_c), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_counter_with_ttl(c_ttl, 2, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(no_c == (mcds_counter *)0x1);
    mcds_counter_free(c_ttl);

    OK(mcds_set_new(store, "c-ttl", &t->set_gone));
    OK(mcds_set_with_ttl(t->set_gone, 2, &s_ttl));
    OK(mcds_set_add(s_ttl, BYTES("a"), 1));
    OK(mcds_set_contains(t->set_gone, BYTES("a"), 1, &b));
    EXPECT(b);
    mcds_set_free(s_ttl);
    OK(mcds_set_new(store, "c-ttl-kept", &t->set_kept));
    OK(mcds_set_with_ttl(t->set_kept, 2, &s_ttl));
    OK(mcds_set_add(t->set_kept, BYTES("a"), 1));
    EXPECT_CODE(mcds_set_with_ttl(NULL, 2, &no_s), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_set_with_ttl(s_ttl, 2, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(no_s == (mcds_set *)0x1);
    mcds_set_free(s_ttl);

    OK(mcds_bloom_new(store, "c-ttl", 1000, 0.01, &t->bloom_gone));
    OK(mcds_bloom_with_ttl(t->bloom_gone, 2, &bl_ttl));
    OK(mcds_bloom_add(bl_ttl, BYTES("a"), 1, &b));
    OK(mcds_bloom_contains(t->bloom_gone, BYTES("a"), 1, &b));
    EXPECT(b);
    mcds_bloom_free(bl_ttl);
    OK(mcds_bloom_new(store, "c-ttl-kept", 1000, 0.01, &t->bloom_kept));
    OK(mcds_bloom_with_ttl(t->bloom_kept, 2, &bl_ttl));
    OK(mcds_bloom_add(t->bloom_kept, BYTES("a"), 1, &b));
    EXPECT_CODE(mcds_bloom_with_ttl(NULL, 2, &no_bl), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_bloom_with_ttl(bl_ttl, 2, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(no_bl == (mcds_bloom *)0x1);
    mcds_bloom_free(bl_ttl);

    OK(mcds_hll_new(store, "c-ttl", &t->hll_gone));
    OK(mcds_hll_with_ttl(t->hll_gone, 2, &h_ttl));
    OK(mcds_hll_add(h_ttl, BYTES("a"), 1, &b));
    OK(mcds_hll_count(t->hll_gone, &v));
    EXPECT(v == 1);
    {
        /* The derived handle keeps the store: a union with it works. */
        const mcds_hll *pair[2] = {t->hll_gone, h_ttl};
        OK(mcds_hll_count_union(pair, 2, &v));
        EXPECT(v == 1);
    }
    mcds_hll_free(h_ttl);
    OK(mcds_hll_new(store, "c-ttl-kept", &t->hll_kept));
    OK(mcds_hll_with_ttl(t->hll_kept, 2, &h_ttl));
    OK(mcds_hll_add(t->hll_kept, BYTES("a"), 1, &b));
    EXPECT_CODE(mcds_hll_with_ttl(NULL, 2, &no_h), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_hll_with_ttl(h_ttl, 2, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(no_h == (mcds_hll *)0x1);
    mcds_hll_free(h_ttl);

    OK(mcds_bitmap_new(store, "c-ttl", 0, 1000, &t->bitmap_gone));
    OK(mcds_bitmap_with_ttl(t->bitmap_gone, 2, &bm_ttl));
    OK(mcds_bitmap_set(bm_ttl, 5, &b));
    OK(mcds_bitmap_get(t->bitmap_gone, 5, &b));
    EXPECT(b);
    mcds_bitmap_free(bm_ttl);
    OK(mcds_bitmap_new(store, "c-ttl-kept", 0, 1000, &t->bitmap_kept));
    OK(mcds_bitmap_with_ttl(t->bitmap_kept, 2, &bm_ttl));
    OK(mcds_bitmap_set(t->bitmap_kept, 5, &b));
    EXPECT_CODE(mcds_bitmap_with_ttl(NULL, 2, &no_bm), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_bitmap_with_ttl(bm_ttl, 2, NULL), MCDS_NULL_ARGUMENT);
    EXPECT(no_bm == (mcds_bitmap *)0x1);
    mcds_bitmap_free(bm_ttl);
}

/* After the TTL: what the TTL handles wrote is gone, the rest is there. */
static void ttl_check(ttl_handles *t) {
    uint64_t v = 0;
    bool b = false;
    OK(mcds_counter_get(t->counter_gone, &v));
    EXPECT(v == 0);
    OK(mcds_counter_get(t->counter_kept, &v));
    EXPECT(v == 1);
    OK(mcds_counter_get(t->zero, &v));
    EXPECT(v == 1);
    OK(mcds_counter_get(t->long_ttl, &v));
    EXPECT(v == 1);
    OK(mcds_counter_get(t->max_ttl, &v));
    EXPECT(v == 1);
    OK(mcds_set_contains(t->set_gone, BYTES("a"), 1, &b));
    EXPECT(!b);
    OK(mcds_set_contains(t->set_kept, BYTES("a"), 1, &b));
    EXPECT(b);
    OK(mcds_bloom_contains(t->bloom_gone, BYTES("a"), 1, &b));
    EXPECT(!b);
    OK(mcds_bloom_contains(t->bloom_kept, BYTES("a"), 1, &b));
    EXPECT(b);
    OK(mcds_hll_count(t->hll_gone, &v));
    EXPECT(v == 0);
    OK(mcds_hll_count(t->hll_kept, &v));
    EXPECT(v == 1);
    OK(mcds_bitmap_get(t->bitmap_gone, 5, &b));
    EXPECT(!b);
    OK(mcds_bitmap_get(t->bitmap_kept, 5, &b));
    EXPECT(b);
    mcds_counter_free(t->counter_gone);
    mcds_counter_free(t->counter_kept);
    mcds_counter_free(t->zero);
    mcds_counter_free(t->long_ttl);
    mcds_counter_free(t->max_ttl);
    mcds_set_free(t->set_gone);
    mcds_set_free(t->set_kept);
    mcds_bloom_free(t->bloom_gone);
    mcds_bloom_free(t->bloom_kept);
    mcds_hll_free(t->hll_gone);
    mcds_hll_free(t->hll_kept);
    mcds_bitmap_free(t->bitmap_gone);
    mcds_bitmap_free(t->bitmap_kept);
}

/* Real expiry, on both stores at once: one sleep. A 2 s TTL lives at most
 * 2 s in the embedded store and 3 s on memcached (whole-second clocks). */
static void ttl_expiry(mcds_store *memory, mcds_store *memcached) {
    ttl_handles m, mc;
    ttl_write(memory, &m);
    ttl_write(memcached, &mc);
    sleep_ms(3500);
    ttl_check(&m);
    ttl_check(&mc);
}

/* ---- Two threads sharing handles. ---- */

#define THREAD_ROUNDS 200
#define THREAD_LOCKED 20

typedef struct {
    mcds_counter *counter;
    mcds_set *set;
    mcds_view_counter *views;
    mcds_store *store;
    int id;
    int failures;
    long *guarded; /* changed only under the distributed lock */
} thread_arg;

static mcds_result thread_loader(void *ctx, uint64_t *out_value) {
    (void)ctx;
    *out_value = 100;
    return MCDS_OK;
}

static void *worker(void *p) {
    thread_arg *t = p;
    uint64_t v = 0;
    char member[32];
    mcds_lock *lock = NULL;
    bool released = false;
    for (int i = 0; i < THREAD_ROUNDS; i++) {
        if (mcds_counter_incr(t->counter, 1, &v) != MCDS_OK) t->failures++;
        int len = snprintf(member, sizeof member, "t%d-%d", t->id, i % 10);
        if (mcds_set_add(t->set, BYTES(member), (size_t)len) != MCDS_OK) t->failures++;
        if (mcds_view_counter_view(t->views, 1, thread_loader, NULL, &v) != MCDS_OK) t->failures++;
    }
    /* Each thread's own handle on one lock: a read-modify-write of a plain
     * long, safe only if the lock excludes the other thread. */
    if (mcds_lock_new(t->store, "c-threads", 30, &lock) != MCDS_OK) t->failures++;
    for (int i = 0; i < THREAD_LOCKED && lock != NULL; i++) {
        if (mcds_lock_acquire(lock, 10000) != MCDS_OK) {
            t->failures++;
            continue;
        }
        long seen = *t->guarded;
        sleep_ms(1);
        *t->guarded = seen + 1;
        if (mcds_lock_release(lock, &released) != MCDS_OK || !released) t->failures++;
    }
    mcds_lock_free(lock);
    /* The last error is per thread. */
    if (t->id == 0) {
        mcds_counter_incr(NULL, 1, &v);
        if (strstr(mcds_last_error_message(), "counter is NULL") == NULL) t->failures++;
    }
    return NULL;
}

static void two_threads(mcds_store *store) {
    mcds_counter *c = NULL;
    mcds_set *s = NULL;
    mcds_view_counter *views = NULL;
    mcds_bytes_list *list = NULL;
    uint64_t v = 0;
    long guarded = 0;
    pthread_t threads[2];
    thread_arg args[2];

    OK(mcds_counter_new(store, "c-threads", &c));
    OK(mcds_set_new(store, "c-threads", &s));
    OK(mcds_view_counter_new(store, "c-threads", 0, &views));
    for (int i = 0; i < 2; i++) {
        args[i] = (thread_arg){c, s, views, store, i, 0, &guarded};
        EXPECT(pthread_create(&threads[i], NULL, worker, &args[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        EXPECT(pthread_join(threads[i], NULL) == 0);
        EXPECT(args[i].failures == 0);
    }
    OK(mcds_counter_get(c, &v));
    EXPECT(v == 2 * THREAD_ROUNDS);
    OK(mcds_set_members(s, &list));
    EXPECT(list_len(list) == 20);
    mcds_bytes_list_free(list);
    OK(mcds_view_counter_get(views, thread_loader, NULL, &v));
    EXPECT(v == 100 + 2 * THREAD_ROUNDS);
    EXPECT(guarded == 2 * THREAD_LOCKED);
    mcds_counter_free(c);
    mcds_set_free(s);
    mcds_view_counter_free(views);
}

/* ---- mcds_store_update: a CAS read-modify-write with a callback. ---- */

#define UPDATE_ROUNDS 200

/* Adds 1 to the decimal number in the value (a missing key counts as 0);
 * ctx counts the calls. With ctx pointing to -1, aborts with MCDS_IO. */
static mcds_result add_one(void *ctx, const uint8_t *current, size_t len, bool exists, mcds_update *out) {
    long *calls = ctx;
    if (*calls < 0) return MCDS_IO;
    __atomic_add_fetch(calls, 1, __ATOMIC_RELAXED);
    char text[32] = {0};
    unsigned long long n = 0;
    if (exists) {
        if (len >= sizeof text) return MCDS_INVALID_ARGUMENT;
        memcpy(text, current, len);
        n = strtoull(text, NULL, 10);
    }
    int written = snprintf(text, sizeof text, "%llu", n + 1);
    return mcds_update_set(out, (const uint8_t *)text, (size_t)written);
}

/* Leaves the item as it is. */
static mcds_result leave(void *ctx, const uint8_t *current, size_t len, bool exists, mcds_update *out) {
    (void)ctx; (void)current; (void)len; (void)exists; (void)out;
    return MCDS_OK;
}

typedef struct {
    mcds_store *store;
    long calls;
    int failures;
} update_arg;

static void *update_worker(void *p) {
    update_arg *a = p;
    for (int i = 0; i < UPDATE_ROUNDS; i++) {
        bool written = false;
        if (mcds_store_update(a->store, "c-update:n", 0, 1000, add_one, &a->calls, &written) != MCDS_OK || !written)
            a->failures++;
    }
    return NULL;
}

static void store_updates(mcds_store *store) {
    pthread_t threads[4];
    update_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (update_arg){store, 0, 0};
        EXPECT(pthread_create(&threads[i], NULL, update_worker, &args[i]) == 0);
    }
    long calls = 0;
    for (int i = 0; i < 4; i++) {
        EXPECT(pthread_join(threads[i], NULL) == 0);
        EXPECT(args[i].failures == 0);
        calls += args[i].calls;
    }
    /* Read it back through an updater that leaves it. */
    bool written = true;
    OK(mcds_store_update(store, "c-update:n", 0, 0, leave, NULL, &written));
    EXPECT(!written);
    mcds_counter *c = NULL;
    uint64_t v = 0;
    OK(mcds_counter_new_with_key(store, (const uint8_t *)"c-update:n", strlen("c-update:n"), &c));
    OK(mcds_counter_get(c, &v));
    EXPECT(v == 4 * UPDATE_ROUNDS);
    mcds_counter_free(c);
    printf("c: mcds_store_update, 4 threads x %d: %llu (updater called %ld times)\n", UPDATE_ROUNDS,
           (unsigned long long)v, calls);
    /* An updater that fails: nothing written, its code named. */
    long abort_ctx = -1;
    EXPECT_CODE(mcds_store_update(store, "c-update:n", 0, 0, add_one, &abort_ctx, NULL), MCDS_CALLBACK_FAILED);
    EXPECT(strstr(mcds_last_error_message(), "MCDS_IO") != NULL);
    EXPECT_CODE(mcds_store_update(store, "c-update:n", 0, 0, NULL, NULL, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_update(NULL, "c-update:n", 0, 0, leave, NULL, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_update(store, NULL, 0, 0, leave, NULL, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_update(store, "bad key", 0, 0, leave, NULL, NULL), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_update_set(NULL, NULL, 0), MCDS_NULL_ARGUMENT);
}

/* ---- NULL in every remaining pointer position, table-driven. ---- */

typedef struct {
    const char *call;
    mcds_result got;
} null_case;

#define NULL_CASE(call) {#call, (call)}

static void nulls_everywhere(mcds_store *store) {
    mcds_window *w = NULL;
    mcds_limiter *lim = NULL;
    mcds_log *log = NULL;
    mcds_event_list *events = NULL;
    mcds_table *t = NULL;
    mcds_hll *h = NULL;
    mcds_bloom *bl = NULL;
    mcds_bitmap *bm = NULL;
    mcds_decision d = {false, 0, 0};
    uint64_t v = 0;
    size_t n = 0;
    bool b = false;
    const uint8_t *data = NULL;
    mcds_bytes_list *list = NULL;

    OK(mcds_window_new(store, "c-nulls", 60, 6, &w));
    OK(mcds_limiter_new(store, "c-nulls", 5, 60, false, &lim));
    OK(mcds_log_new(store, "c-nulls", 60, 11, &log));
    OK(mcds_log_put(log, BYTES("x"), 1, &v));
    OK(mcds_log_fetch(log, 0, UINT64_MAX, &events));
    OK(mcds_table_new(store, "c-nulls", &t));
    OK(mcds_hll_new(store, "c-nulls", &h));
    OK(mcds_bloom_new(store, "c-nulls", 100, 0.01, &bl));
    OK(mcds_bitmap_new(store, "c-nulls", 0, 1000, &bm));
    {
        null_case cases[] = {
            NULL_CASE(mcds_event_list_len(events, NULL)),
            NULL_CASE(mcds_event_list_get(NULL, 0, &v, &data, &n)),
            NULL_CASE(mcds_event_list_get(events, 0, &v, NULL, &n)),
            NULL_CASE(mcds_event_list_get(events, 0, &v, &data, NULL)),
            NULL_CASE(mcds_window_new(NULL, "w", 60, 6, &w)),
            NULL_CASE(mcds_window_new(store, NULL, 60, 6, &w)),
            NULL_CASE(mcds_window_new(store, "w", 60, 6, NULL)),
            NULL_CASE(mcds_window_incr(w, 1, NULL)),
            NULL_CASE(mcds_window_value(NULL, &v)),
            NULL_CASE(mcds_limiter_new(NULL, "l", 5, 60, false, &lim)),
            NULL_CASE(mcds_limiter_new(store, NULL, 5, 60, false, &lim)),
            NULL_CASE(mcds_limiter_new(store, "l", 5, 60, false, NULL)),
            NULL_CASE(mcds_limiter_check(NULL, &d)),
            NULL_CASE(mcds_limiter_peek(lim, NULL)),
            NULL_CASE(mcds_log_new(NULL, "l", 60, 11, &log)),
            NULL_CASE(mcds_log_new(store, NULL, 60, 11, &log)),
            NULL_CASE(mcds_log_new(store, "l", 60, 11, NULL)),
            NULL_CASE(mcds_log_put(NULL, BYTES("x"), 1, &v)),
            NULL_CASE(mcds_log_put(log, BYTES("x"), 1, NULL)),
            NULL_CASE(mcds_log_fetch(NULL, 0, 1, &events)),
            NULL_CASE(mcds_table_new(NULL, "t", &t)),
            NULL_CASE(mcds_table_new(store, NULL, &t)),
            NULL_CASE(mcds_table_new(store, "t", NULL)),
            NULL_CASE(mcds_table_set(NULL, BYTES("a"), 1, NULL, 0)),
            NULL_CASE(mcds_table_set(t, BYTES("a"), 1, NULL, 1)),
            NULL_CASE(mcds_table_has(t, NULL, 1, &b)),
            NULL_CASE(mcds_table_has(t, BYTES("a"), 1, NULL)),
            NULL_CASE(mcds_table_get(NULL, BYTES("a"), 1, &list)),
            NULL_CASE(mcds_table_get(t, NULL, 1, &list)),
            NULL_CASE(mcds_table_delete(NULL, BYTES("a"), 1, &b)),
            NULL_CASE(mcds_table_delete(t, NULL, 1, &b)),
            NULL_CASE(mcds_table_keys(NULL, &list)),
            NULL_CASE(mcds_hll_new(NULL, "h", &h)),
            NULL_CASE(mcds_hll_new(store, NULL, &h)),
            NULL_CASE(mcds_hll_new(store, "h", NULL)),
            NULL_CASE(mcds_hll_count(NULL, &v)),
            NULL_CASE(mcds_hll_merge(NULL, NULL, 0)),
            NULL_CASE(mcds_bloom_new(NULL, "b", 100, 0.01, &bl)),
            NULL_CASE(mcds_bloom_new(store, NULL, 100, 0.01, &bl)),
            NULL_CASE(mcds_bloom_new(store, "b", 100, 0.01, NULL)),
            NULL_CASE(mcds_bloom_add(NULL, BYTES("a"), 1, &b)),
            NULL_CASE(mcds_bloom_add(bl, NULL, 1, &b)),
            NULL_CASE(mcds_bloom_add(bl, BYTES("a"), 1, NULL)),
            NULL_CASE(mcds_bloom_contains(bl, NULL, 1, &b)),
            NULL_CASE(mcds_bloom_contains(bl, BYTES("a"), 1, NULL)),
            NULL_CASE(mcds_bitmap_new(NULL, "m", 0, 1000, &bm)),
            NULL_CASE(mcds_bitmap_new(store, NULL, 0, 1000, &bm)),
            NULL_CASE(mcds_bitmap_new(store, "m", 0, 1000, NULL)),
            NULL_CASE(mcds_bitmap_set(NULL, 0, &b)),
            NULL_CASE(mcds_bitmap_set(bm, 0, NULL)),
            NULL_CASE(mcds_bitmap_mark(NULL, 0, &b)),
            NULL_CASE(mcds_bitmap_mark(bm, 0, NULL)),
            NULL_CASE(mcds_bitmap_get(NULL, 0, &b)),
            NULL_CASE(mcds_bitmap_get(bm, 0, NULL)),
            NULL_CASE(mcds_bitmap_count(bm, 0, 1, NULL)),
            NULL_CASE(mcds_hll_add_many(NULL, NULL, NULL, 0, &b)),
            NULL_CASE(mcds_hll_add_many(h, NULL, NULL, 0, NULL)),
            NULL_CASE(mcds_hll_clear(NULL)),
            NULL_CASE(mcds_hll_with_ttl(NULL, 1, &h)),
            NULL_CASE(mcds_hll_with_ttl(h, 1, NULL)),
            NULL_CASE(mcds_bloom_add_many(NULL, NULL, NULL, 0, &n)),
            NULL_CASE(mcds_bloom_add_many(bl, NULL, NULL, 0, NULL)),
            NULL_CASE(mcds_bloom_contains_many(NULL, NULL, NULL, 0, &b)),
            NULL_CASE(mcds_bloom_contains_many(bl, NULL, NULL, 1, &b)),
            NULL_CASE(mcds_bloom_clear(NULL)),
            NULL_CASE(mcds_bloom_with_ttl(NULL, 1, &bl)),
            NULL_CASE(mcds_bloom_with_ttl(bl, 1, NULL)),
            NULL_CASE(mcds_bitmap_with_ttl(NULL, 1, &bm)),
            NULL_CASE(mcds_bitmap_with_ttl(bm, 1, NULL)),
            NULL_CASE(mcds_counter_reset(NULL)),
            NULL_CASE(mcds_counter_incr_many(NULL, NULL, 1, NULL, NULL)),
            NULL_CASE(mcds_counter_with_ttl(NULL, 1, NULL)),
            NULL_CASE(mcds_set_with_ttl(NULL, 1, NULL)),
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            checks++;
            if (cases[i].got != MCDS_NULL_ARGUMENT) {
                failures++;
                fprintf(stderr, "%s returned %s, expected MCDS_NULL_ARGUMENT\n", cases[i].call,
                        mcds_result_name(cases[i].got));
            }
        }
    }
    mcds_event_list_free(events);
    mcds_window_free(w);
    mcds_limiter_free(lim);
    mcds_log_free(log);
    mcds_table_free(t);
    mcds_hll_free(h);
    mcds_bloom_free(bl);
    mcds_bitmap_free(bm);
    mcds_int_array_free(NULL);
}

/* ---- Time series: exact aggregates, 128-bit sums, packed slots. ---- */

/* Unix milliseconds now, by the system clock (what libmcds reads). */
static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* A sum's two halves as the exact 128-bit value (GCC and Clang). */
__extension__ typedef __int128 int128;
static int128 rebuild(mcds_i128 x) {
    return (int128)x.hi * ((int128)1 << 64) + (int128)x.lo;
}

/* Does `list` hold exactly these buckets (start, count, sum, min, max)? */
static bool buckets_are(const mcds_bucket_list *list, size_t n, const uint64_t *starts,
                        const uint64_t *counts, const int64_t *sums, const int64_t *mins,
                        const int64_t *maxs) {
    size_t len = 999;
    mcds_bucket b;
    if (mcds_bucket_list_len(list, &len) != MCDS_OK || len != n) return false;
    for (size_t i = 0; i < n; i++) {
        if (mcds_bucket_list_get(list, i, &b) != MCDS_OK) return false;
        if (b.start_ms != starts[i] || b.stats.count != counts[i] ||
            rebuild(b.stats.sum) != sums[i] || b.stats.min != mins[i] || b.stats.max != maxs[i])
            return false;
    }
    return true;
}

/* `loses`: the store is a fresh memcached, which cannot vouch for data
 * from before it started (the loss check). */
static void timeseries(mcds_store *store, bool loses) {
    /* Given coarsest first: the series keeps them finest first. */
    const mcds_resolution res[2] = {{60000, 86400000}, {1000, 3600000}};
    const uint64_t second = 1000, minute = 60000;
    /* Ten minutes ago, on a minute: closed buckets, well within retention. */
    const uint64_t t0 = now_ms() / minute * minute - 10 * minute;
    mcds_timeseries *ts = NULL, *other = NULL, *prefixed_ts = NULL, *untouched = NULL;
    mcds_timeseries *checked = NULL, *strict = NULL;
    mcds_store *prefixed = NULL, *elsewhere = NULL;
    mcds_bucket_list *list = NULL;
    mcds_bucket bucket;
    mcds_resolution got[8];
    mcds_stats stats;
    mcds_i128 sum = {7, 7};
    size_t len = 0;
    uint64_t count = 0;
    int64_t v = 0;
    double avg = 0;
    bool found = false;
    char *name = NULL;

    OK(mcds_timeseries_new(store, "c-latency", res, 2, &checked));
    /* Ten minutes ago is before the test's memcached started: with the loss
     * check (the default), a read cannot vouch for it there. The embedded
     * store has lost nothing. The rest reads without the check. */
    EXPECT_CODE(mcds_timeseries_aggregate(checked, t0, t0, minute, &found, &stats),
                loses ? MCDS_LOST : MCDS_OK);
    if (loses) EXPECT(strstr(mcds_last_error_message(), "may have lost data") != NULL);
    OK(mcds_timeseries_with_loss_check(checked, false, &ts));
    /* No clock skew allowed: a sample 5 s ahead is refused. */
    OK(mcds_timeseries_with_max_clock_skew(ts, 0, &strict));
    EXPECT_CODE(mcds_timeseries_record(strict, now_ms() + 5000, 1), MCDS_INVALID_ARGUMENT);
    OK(mcds_timeseries_record(ts, now_ms() + 5000, 1)); /* within the default 60 s */
    OK(mcds_timeseries_name(ts, &name));
    EXPECT(name != NULL && strcmp(name, "c-latency") == 0);
    mcds_string_free(name);
    memset(got, 0, sizeof got);
    OK(mcds_timeseries_resolutions(ts, got, 8, &len));
    EXPECT(len == 2 && got[0].step_ms == 1000 && got[0].retention_ms == 3600000 &&
           got[1].step_ms == 60000 && got[1].retention_ms == 86400000 && got[2].step_ms == 0);
    len = 77;
    EXPECT_CODE(mcds_timeseries_resolutions(ts, got, 1, &len), MCDS_INVALID_ARGUMENT);
    EXPECT(len == 77);

    /* Nothing yet: found is false, the outputs zeros. */
    stats.count = 5;
    OK(mcds_timeseries_aggregate(ts, t0, t0 + minute - 1, minute, &found, &stats));
    EXPECT(!found && stats.count == 0 && stats.sum.hi == 0 && stats.sum.lo == 0);
    v = 5;
    OK(mcds_timeseries_min(ts, t0, t0, minute, &found, &v));
    EXPECT(!found && v == 0);

    OK(mcds_timeseries_record(ts, t0, 12));
    OK(mcds_timeseries_record(ts, t0 + 500, -3)); /* same second */
    OK(mcds_timeseries_record(ts, t0 + 1000, 40)); /* next second, same minute */
    {
        const uint64_t starts[] = {t0, t0 + second}, counts[] = {2, 1};
        const int64_t sums[] = {9, 40}, mins[] = {-3, 40}, maxs[] = {12, 40};
        OK(mcds_timeseries_range(ts, t0, t0 + minute - 1, second, &list));
        EXPECT(buckets_are(list, 2, starts, counts, sums, mins, maxs));
        bucket.start_ms = 1;
        EXPECT_CODE(mcds_bucket_list_get(list, 2, &bucket), MCDS_INVALID_ARGUMENT);
        EXPECT(bucket.start_ms == 1);
        mcds_bucket_list_free(list);
    }
    OK(mcds_timeseries_aggregate(ts, t0, t0, minute, &found, &stats));
    EXPECT(found && stats.count == 3 && stats.sum.hi == 0 && stats.sum.lo == 49 &&
           stats.min == -3 && stats.max == 40);
    OK(mcds_timeseries_count(ts, t0, t0 + minute - 1, second, &count));
    EXPECT(count == 3);
    OK(mcds_timeseries_sum(ts, t0, t0 + minute - 1, second, &sum));
    EXPECT(sum.hi == 0 && sum.lo == 49);
    OK(mcds_timeseries_avg(ts, t0, t0 + minute - 1, second, &found, &avg));
    EXPECT(found && avg == 49.0 / 3.0);
    OK(mcds_timeseries_min(ts, t0, t0 + minute - 1, minute, &found, &v));
    EXPECT(found && v == -3);
    OK(mcds_timeseries_max(ts, t0, t0 + minute - 1, minute, &found, &v));
    EXPECT(found && v == 40);

    /* Sums beyond 2^63 either way, exact in their halves: 3 x INT64_MAX is
     * 2^64 + 2^63 - 3, 3 x INT64_MIN is -2 * 2^64 + 2^63. */
    for (int i = 0; i < 3; i++) {
        OK(mcds_timeseries_record(ts, t0 + 2000, INT64_MAX));
        OK(mcds_timeseries_record(ts, t0 + 3000, INT64_MIN));
    }
    OK(mcds_timeseries_sum(ts, t0 + 2000, t0 + 2000, second, &sum));
    EXPECT(sum.hi == 1 && sum.lo == 0x7ffffffffffffffdu);
    EXPECT(rebuild(sum) == (int128)INT64_MAX * 3);
    OK(mcds_timeseries_aggregate(ts, t0 + 3000, t0 + 3999, second, &found, &stats));
    EXPECT(found && stats.count == 3 && stats.sum.hi == -2 && stats.sum.lo == 0x8000000000000000u &&
           stats.min == INT64_MIN && stats.max == INT64_MIN);
    EXPECT(rebuild(stats.sum) == (int128)INT64_MIN * 3);
    /* The minute: 49 + 3 (2^63 - 1) - 3 * 2^63 = 46, over 9 samples. */
    OK(mcds_timeseries_aggregate(ts, t0, t0, minute, &found, &stats));
    EXPECT(found && stats.count == 9 && stats.sum.hi == 0 && stats.sum.lo == 46 &&
           stats.min == INT64_MIN && stats.max == INT64_MAX);
    OK(mcds_timeseries_sum(ts, t0, t0 + 2999, second, &sum));
    EXPECT(rebuild(sum) == 49 + (int128)INT64_MAX * 3);

    /* Union and intersection, with a series on a prefixed handle of the
     * same store. */
    OK(mcds_store_with_prefix(store, "c-other:", &prefixed));
    OK(mcds_timeseries_new(prefixed, "c-latency", res, 2, &untouched));
    OK(mcds_timeseries_with_loss_check(untouched, false, &other));
    mcds_timeseries_free(untouched);
    untouched = NULL;
    OK(mcds_timeseries_record(other, t0, 100));
    OK(mcds_timeseries_record(other, t0 + 5000, 7));
    {
        const mcds_timeseries *both[2] = {ts, other};
        const uint64_t starts[] = {t0, t0 + 5000}, counts[] = {3, 1};
        const int64_t sums[] = {109, 7}, mins[] = {-3, 7}, maxs[] = {100, 7};
        OK(mcds_timeseries_intersection(both, 2, t0, t0 + minute - 1, second, &list));
        EXPECT(buckets_are(list, 1, starts, counts, sums, mins, maxs));
        mcds_bucket_list_free(list);
        OK(mcds_timeseries_union(both, 2, t0, t0 + minute - 1, minute, &list));
        {
            const uint64_t m_starts[] = {t0}, m_counts[] = {11};
            const int64_t m_sums[] = {46 + 107}, m_mins[] = {INT64_MIN}, m_maxs[] = {INT64_MAX};
            EXPECT(buckets_are(list, 1, m_starts, m_counts, m_sums, m_mins, m_maxs));
        }
        mcds_bucket_list_free(list);
        OK(mcds_timeseries_union(both + 1, 1, t0 + 4000, t0 + 5999, second, &list));
        EXPECT(buckets_are(list, 1, starts + 1, counts + 1, sums + 1, mins + 1, maxs + 1));
        mcds_bucket_list_free(list);
        /* No series: an empty list. */
        list = NULL;
        OK(mcds_timeseries_union(NULL, 0, t0, t0, second, &list));
        OK(mcds_bucket_list_len(list, &len));
        EXPECT(len == 0);
        mcds_bucket_list_free(list);
        /* Another store entirely: refused. */
        OK(mcds_store_new_memory(&elsewhere));
        OK(mcds_timeseries_new(elsewhere, "c-latency", res, 2, &prefixed_ts));
        both[1] = prefixed_ts;
        list = NULL;
        EXPECT_CODE(mcds_timeseries_union(both, 2, t0, t0, second, &list), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_intersection(both, 2, t0, t0, second, &list),
                    MCDS_INVALID_ARGUMENT);
        EXPECT(list == NULL);
        both[1] = NULL;
        EXPECT_CODE(mcds_timeseries_union(both, 2, t0, t0, second, &list), MCDS_NULL_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "series[1]") != NULL);
        EXPECT_CODE(mcds_timeseries_intersection(NULL, 1, t0, t0, second, &list),
                    MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_union(both, 1, t0, t0, second, NULL), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_union(both, SIZE_MAX, t0, t0, second, &list),
                    MCDS_INVALID_ARGUMENT);
        /* A step the series does not record at. */
        EXPECT_CODE(mcds_timeseries_union(both, 1, t0, t0, 5000, &list), MCDS_INVALID_ARGUMENT);
        EXPECT(list == NULL);
    }

    /* record_now lands between two readings of the clock. */
    {
        uint64_t before = now_ms(), after;
        OK(mcds_timeseries_record_now(other, -8));
        after = now_ms();
        OK(mcds_timeseries_aggregate(other, before, after, second, &found, &stats));
        EXPECT(found && stats.count == 1 && rebuild(stats.sum) == -8 && stats.sum.hi == -1 &&
               stats.min == -8 && stats.max == -8);
    }

    /* Ranges: backwards is empty; past retention is skipped (not an error),
     * and so is a record there; more than 10 000 buckets is refused. */
    OK(mcds_timeseries_range(ts, t0 + second, t0, second, &list));
    OK(mcds_bucket_list_len(list, &len));
    EXPECT(len == 0);
    mcds_bucket_list_free(list);
    OK(mcds_timeseries_record(ts, 5000, 1));
    OK(mcds_timeseries_count(ts, 0, 9999, second, &count));
    EXPECT(count == 0);
    count = 5;
    EXPECT_CODE(mcds_timeseries_count(ts, 0, UINT64_MAX, second, &count), MCDS_INVALID_ARGUMENT);
    EXPECT(count == 5);
    EXPECT_CODE(mcds_timeseries_sum(ts, t0, t0, 0, &sum), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_timeseries_avg(ts, t0, t0, 30000, &found, &avg), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_timeseries_max(ts, t0, t0, UINT64_MAX, &found, &v), MCDS_INVALID_ARGUMENT);

    /* Bad construction: nothing is written to out. */
    {
        const mcds_resolution nine[9] = {{1, 10},  {2, 10},  {3, 10},  {4, 10}, {5, 10},
                                         {6, 10},  {7, 10},  {8, 10},  {9, 10}};
        const mcds_resolution twice[2] = {{1000, 5000}, {1000, 9000}};
        const mcds_resolution zero_step = {0, 1000}, short_retention = {60000, 1000};
        const mcds_resolution absurd = {UINT64_MAX, UINT64_MAX};
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", res, 0, &untouched), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", NULL, 0, &untouched), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", nine, 9, &untouched), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", twice, 2, &untouched), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", &zero_step, 1, &untouched),
                    MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", &short_retention, 1, &untouched),
                    MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", &absurd, 1, &untouched),
                    MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "c-bad", res, SIZE_MAX, &untouched),
                    MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_timeseries_new(store, "\xff\xfe", res, 2, &untouched), MCDS_INVALID_UTF8);
        EXPECT_CODE(mcds_timeseries_new(store, "bad name", res, 2, &untouched), MCDS_INVALID_KEY);
        EXPECT(untouched == NULL);
    }
    {
        null_case cases[] = {
            NULL_CASE(mcds_timeseries_new(NULL, "t", res, 2, &untouched)),
            NULL_CASE(mcds_timeseries_new(store, NULL, res, 2, &untouched)),
            NULL_CASE(mcds_timeseries_new(store, "t", NULL, 2, &untouched)),
            NULL_CASE(mcds_timeseries_new(store, "t", res, 2, NULL)),
            NULL_CASE(mcds_timeseries_with_loss_check(NULL, true, &untouched)),
            NULL_CASE(mcds_timeseries_with_loss_check(ts, true, NULL)),
            NULL_CASE(mcds_timeseries_with_max_clock_skew(NULL, 0, &untouched)),
            NULL_CASE(mcds_timeseries_with_max_clock_skew(ts, 0, NULL)),
            NULL_CASE(mcds_timeseries_name(NULL, &name)),
            NULL_CASE(mcds_timeseries_name(ts, NULL)),
            NULL_CASE(mcds_timeseries_resolutions(NULL, got, 8, &len)),
            NULL_CASE(mcds_timeseries_resolutions(ts, NULL, 8, &len)),
            NULL_CASE(mcds_timeseries_resolutions(ts, got, 8, NULL)),
            NULL_CASE(mcds_timeseries_record(NULL, t0, 1)),
            NULL_CASE(mcds_timeseries_record_now(NULL, 1)),
            NULL_CASE(mcds_timeseries_range(NULL, t0, t0, second, &list)),
            NULL_CASE(mcds_timeseries_range(ts, t0, t0, second, NULL)),
            NULL_CASE(mcds_timeseries_aggregate(NULL, t0, t0, second, &found, &stats)),
            NULL_CASE(mcds_timeseries_aggregate(ts, t0, t0, second, NULL, &stats)),
            NULL_CASE(mcds_timeseries_aggregate(ts, t0, t0, second, &found, NULL)),
            NULL_CASE(mcds_timeseries_count(NULL, t0, t0, second, &count)),
            NULL_CASE(mcds_timeseries_count(ts, t0, t0, second, NULL)),
            NULL_CASE(mcds_timeseries_sum(NULL, t0, t0, second, &sum)),
            NULL_CASE(mcds_timeseries_sum(ts, t0, t0, second, NULL)),
            NULL_CASE(mcds_timeseries_avg(NULL, t0, t0, second, &found, &avg)),
            NULL_CASE(mcds_timeseries_avg(ts, t0, t0, second, NULL, &avg)),
            NULL_CASE(mcds_timeseries_avg(ts, t0, t0, second, &found, NULL)),
            NULL_CASE(mcds_timeseries_min(NULL, t0, t0, second, &found, &v)),
            NULL_CASE(mcds_timeseries_min(ts, t0, t0, second, NULL, &v)),
            NULL_CASE(mcds_timeseries_min(ts, t0, t0, second, &found, NULL)),
            NULL_CASE(mcds_timeseries_max(NULL, t0, t0, second, &found, &v)),
            NULL_CASE(mcds_timeseries_max(ts, t0, t0, second, NULL, &v)),
            NULL_CASE(mcds_timeseries_max(ts, t0, t0, second, &found, NULL)),
            NULL_CASE(mcds_bucket_list_len(NULL, &len)),
            NULL_CASE(mcds_bucket_list_get(NULL, 0, &bucket)),
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            checks++;
            if (cases[i].got != MCDS_NULL_ARGUMENT) {
                failures++;
                fprintf(stderr, "%s returned %s, expected MCDS_NULL_ARGUMENT\n", cases[i].call,
                        mcds_result_name(cases[i].got));
            }
        }
        EXPECT(untouched == NULL);
    }
    OK(mcds_timeseries_range(ts, t0, t0, second, &list));
    EXPECT_CODE(mcds_bucket_list_len(list, NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_bucket_list_get(list, 0, NULL), MCDS_NULL_ARGUMENT);
    mcds_bucket_list_free(list);
    mcds_bucket_list_free(NULL);
    mcds_timeseries_free(NULL);
    mcds_timeseries_free(ts);
    mcds_timeseries_free(checked);
    mcds_timeseries_free(strict);
    mcds_timeseries_free(other);
    mcds_timeseries_free(prefixed_ts);
    mcds_store_free(prefixed);
    mcds_store_free(elsewhere);
}

/* Does `list` hold slots from `start` on, `slot_ms` apart, with `values`? */
static bool slots_are(const mcds_slot_list *list, uint64_t start, uint64_t slot_ms, size_t n,
                      const uint32_t *values) {
    size_t len = 999;
    mcds_slot s;
    if (mcds_slot_list_len(list, &len) != MCDS_OK || len != n) return false;
    for (size_t i = 0; i < n; i++) {
        if (mcds_slot_list_get(list, i, &s) != MCDS_OK) return false;
        if (s.start_ms != start + i * slot_ms || s.value != values[i]) return false;
    }
    return true;
}

/* Replace `*p` by a handle on the same series without the loss check. */
static void without_loss_check(mcds_packed_series **p) {
    mcds_packed_series *derived = NULL;
    OK(mcds_packed_series_with_loss_check(*p, false, &derived));
    mcds_packed_series_free(*p);
    *p = derived;
}

/* `loses` as for timeseries(). */
static void packed_series(mcds_store *store, bool loses) {
    const uint64_t minute = 60000, week = 7 * 86400000ull;
    const uint64_t t0 = now_ms() / minute * minute - 10 * minute;
    mcds_packed_series *p = NULL, *wide = NULL, *widest = NULL, *reopened = NULL;
    mcds_packed_series *untouched = NULL, *checked = NULL, *strict = NULL;
    mcds_slot_list *list = NULL;
    mcds_slot slot;
    uint32_t v = 0;
    uint64_t sum = 0;
    size_t len = 0;

    OK(mcds_packed_series_new(store, "c-logins", minute, 1440, 1, week, &checked));
    /* As for time series: the loss check cannot vouch for ten minutes ago
     * on a fresh memcached; the rest reads without it. */
    EXPECT_CODE(mcds_packed_series_get(checked, t0, &v), loses ? MCDS_LOST : MCDS_OK);
    OK(mcds_packed_series_with_loss_check(checked, false, &p));
    OK(mcds_packed_series_with_max_clock_skew(p, 0, &strict));
    EXPECT_CODE(mcds_packed_series_incr(strict, now_ms() + 5000, 1, &v), MCDS_INVALID_ARGUMENT);
    OK(mcds_packed_series_get(p, t0, &v));
    EXPECT(v == 0);
    OK(mcds_packed_series_incr(p, t0, 3, &v));
    EXPECT(v == 3);
    OK(mcds_packed_series_incr(p, t0 + 59000, 1, &v)); /* same minute */
    EXPECT(v == 4);
    OK(mcds_packed_series_incr(p, t0 + minute, 300, &v)); /* saturates at 255 */
    EXPECT(v == 255);
    OK(mcds_packed_series_incr(p, t0 + minute, 1, &v));
    EXPECT(v == 255);
    OK(mcds_packed_series_incr(p, t0, 0, &v));
    EXPECT(v == 4);
    {
        const uint32_t values[] = {4, 255, 0};
        OK(mcds_packed_series_range(p, t0, t0 + 2 * minute, &list));
        EXPECT(slots_are(list, t0, minute, 3, values));
        slot.value = 9;
        EXPECT_CODE(mcds_slot_list_get(list, 3, &slot), MCDS_INVALID_ARGUMENT);
        EXPECT(slot.value == 9);
        EXPECT_CODE(mcds_slot_list_len(list, NULL), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_slot_list_get(list, 0, NULL), MCDS_NULL_ARGUMENT);
        mcds_slot_list_free(list);
    }
    OK(mcds_packed_series_sum(p, t0, t0 + 2 * minute, &sum));
    EXPECT(sum == 259);
    OK(mcds_packed_series_get(p, t0 + 30000, &v));
    EXPECT(v == 4);
    {
        uint64_t before = now_ms(), after;
        OK(mcds_packed_series_incr_now(p, 2, &v));
        after = now_ms();
        EXPECT(v >= 2);
        OK(mcds_packed_series_sum(p, before, after, &sum));
        EXPECT(sum == v);
    }
    /* Backwards is empty; past retention reads nothing and counts nothing. */
    OK(mcds_packed_series_range(p, t0 + minute, t0, &list));
    OK(mcds_slot_list_len(list, &len));
    EXPECT(len == 0);
    mcds_slot_list_free(list);
    v = 7;
    EXPECT_CODE(mcds_packed_series_incr(p, 1000, 1, &v), MCDS_INVALID_ARGUMENT);
    EXPECT(v == 7);
    OK(mcds_packed_series_get(p, 1000, &v));
    EXPECT(v == 0);
    /* A week of minutes is 10 080 slots: fine; a year is not. */
    OK(mcds_packed_series_sum(p, 0, now_ms(), &sum));
    EXPECT(sum >= 261);
    sum = 1;
    EXPECT_CODE(mcds_packed_series_sum(p, 0, t0 + 400 * 86400000ull, &sum), MCDS_INVALID_ARGUMENT);
    EXPECT(sum == 1);

    /* Other widths saturate at their maximum. */
    OK(mcds_packed_series_new(store, "c-bytes", minute, 60, 2, week, &wide));
    without_loss_check(&wide);
    OK(mcds_packed_series_incr(wide, t0, 70000, &v));
    EXPECT(v == 65535);
    OK(mcds_packed_series_new(store, "c-bytes32", minute, 60, 4, week, &widest));
    without_loss_check(&widest);
    OK(mcds_packed_series_incr(widest, t0, UINT32_MAX - 1, &v));
    EXPECT(v == UINT32_MAX - 1);
    OK(mcds_packed_series_incr(widest, t0, 5, &v));
    EXPECT(v == UINT32_MAX);
    OK(mcds_packed_series_sum(widest, t0, t0 + 59 * minute, &sum));
    EXPECT(sum == UINT32_MAX);
    /* The same shape reopened with another width finds corrupt items. */
    OK(mcds_packed_series_new(store, "c-logins", minute, 1440, 2, week, &reopened));
    without_loss_check(&reopened);
    v = 7;
    EXPECT_CODE(mcds_packed_series_get(reopened, t0, &v), MCDS_CORRUPT);
    EXPECT_CODE(mcds_packed_series_incr(reopened, t0, 1, &v), MCDS_CORRUPT);
    EXPECT(v == 7);

    /* Bad construction: nothing is written to out. */
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", minute, 60, 3, week, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", minute, 60, 0, week, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", 0, 60, 1, week, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", UINT64_MAX, 60, 1, UINT64_MAX, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", minute, 0, 1, week, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", minute, 65537, 1, week, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", minute, SIZE_MAX, 1, week, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "c-bad", minute, 60, 1, minute, &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_packed_series_new(store, "\xc3\x28", minute, 60, 1, week, &untouched),
                MCDS_INVALID_UTF8);
    EXPECT_CODE(mcds_packed_series_new(store, "bad name", minute, 60, 1, week, &untouched),
                MCDS_INVALID_KEY);
    EXPECT(untouched == NULL);
    {
        null_case cases[] = {
            NULL_CASE(mcds_packed_series_new(NULL, "p", minute, 60, 1, week, &untouched)),
            NULL_CASE(mcds_packed_series_new(store, NULL, minute, 60, 1, week, &untouched)),
            NULL_CASE(mcds_packed_series_new(store, "p", minute, 60, 1, week, NULL)),
            NULL_CASE(mcds_packed_series_with_loss_check(NULL, true, &untouched)),
            NULL_CASE(mcds_packed_series_with_loss_check(p, true, NULL)),
            NULL_CASE(mcds_packed_series_with_max_clock_skew(NULL, 0, &untouched)),
            NULL_CASE(mcds_packed_series_with_max_clock_skew(p, 0, NULL)),
            NULL_CASE(mcds_packed_series_incr(NULL, t0, 1, &v)),
            NULL_CASE(mcds_packed_series_incr(p, t0, 1, NULL)),
            NULL_CASE(mcds_packed_series_incr_now(NULL, 1, &v)),
            NULL_CASE(mcds_packed_series_incr_now(p, 1, NULL)),
            NULL_CASE(mcds_packed_series_get(NULL, t0, &v)),
            NULL_CASE(mcds_packed_series_get(p, t0, NULL)),
            NULL_CASE(mcds_packed_series_range(NULL, t0, t0, &list)),
            NULL_CASE(mcds_packed_series_range(p, t0, t0, NULL)),
            NULL_CASE(mcds_packed_series_sum(NULL, t0, t0, &sum)),
            NULL_CASE(mcds_packed_series_sum(p, t0, t0, NULL)),
            NULL_CASE(mcds_slot_list_len(NULL, &len)),
            NULL_CASE(mcds_slot_list_get(NULL, 0, &slot)),
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            checks++;
            if (cases[i].got != MCDS_NULL_ARGUMENT) {
                failures++;
                fprintf(stderr, "%s returned %s, expected MCDS_NULL_ARGUMENT\n", cases[i].call,
                        mcds_result_name(cases[i].got));
            }
        }
        EXPECT(untouched == NULL);
    }
    mcds_slot_list_free(NULL);
    mcds_packed_series_free(NULL);
    mcds_packed_series_free(p);
    mcds_packed_series_free(checked);
    mcds_packed_series_free(strict);
    mcds_packed_series_free(wide);
    mcds_packed_series_free(widest);
    mcds_packed_series_free(reopened);
}

/* ---- Leaderboard: exact below capacity, Space-Saving past it. ---- */

static void expect_entry(const mcds_entry_list *list, size_t i, const char *member, uint64_t count,
                         uint64_t error) {
    const uint8_t *data = NULL;
    size_t len = 0;
    uint64_t c = 0, e = 0;
    OK(mcds_entry_list_get(list, i, &data, &len, &c, &e));
    EXPECT(len == strlen(member) && memcmp(data, member, len) == 0);
    EXPECT(c == count);
    EXPECT(e == error);
}

static void leaderboards(mcds_store *store) {
    mcds_leaderboard *lb = NULL, *other = NULL, *timed = NULL, *no_lb = (mcds_leaderboard *)0x1;
    mcds_entry_list *top = NULL, *no_list = (mcds_entry_list *)0x1;
    mcds_board_summary sum = {7, 7, false, 7, 7};
    uint64_t v = 777, err = 777;
    uint32_t cap = 0;
    size_t n = 777;
    bool found = true;
    const uint8_t *data = NULL;
    char long_member[130];
    memset(long_member, 'm', sizeof long_member);

    EXPECT_CODE(mcds_leaderboard_new(store, "c-board", 0, &no_lb), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "capacity") != NULL);
    EXPECT_CODE(mcds_leaderboard_new(store, "c-board", UINT32_MAX, &no_lb), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_leaderboard_new(store, "", 3, &no_lb), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_leaderboard_new(store, "c\xff", 3, &no_lb), MCDS_INVALID_UTF8);
    EXPECT(no_lb == (mcds_leaderboard *)0x1); /* outputs only on success */
    OK(mcds_leaderboard_new(store, "c-board", 3, &lb));
    OK(mcds_leaderboard_capacity(lb, &cap));
    EXPECT(cap == 3);
    OK(mcds_leaderboard_key(lb, &data, &n));
    EXPECT(n == strlen("topk:c-board:board") && memcmp(data, "topk:c-board:board", n) == 0);

    /* Never counted: empty, exact. */
    OK(mcds_leaderboard_summary(lb, &sum));
    EXPECT(sum.capacity == 3 && sum.total == 0 && sum.exact && sum.max_error == 0 && sum.members == 0);
    OK(mcds_leaderboard_score(lb, BYTES("ann"), 3, &found, &v, &err));
    EXPECT(!found && v == 0 && err == 0);

    /* Exact up to 3 members. */
    OK(mcds_leaderboard_incr(lb, BYTES("ann"), 3, 5, &v));
    EXPECT(v == 5);
    OK(mcds_leaderboard_incr(lb, BYTES("bob"), 3, 3, &v));
    EXPECT(v == 3);
    OK(mcds_leaderboard_incr(lb, BYTES("cy"), 2, 1, &v));
    EXPECT(v == 1);
    OK(mcds_leaderboard_incr(lb, BYTES("ann"), 3, 2, &v));
    EXPECT(v == 7);
    OK(mcds_leaderboard_summary(lb, &sum));
    EXPECT(sum.capacity == 3 && sum.total == 11 && sum.exact && sum.max_error == 0 && sum.members == 3);
    OK(mcds_leaderboard_top(lb, 10, &top));
    OK(mcds_entry_list_len(top, &n));
    EXPECT(n == 3);
    expect_entry(top, 0, "ann", 7, 0);
    expect_entry(top, 1, "bob", 3, 0);
    expect_entry(top, 2, "cy", 1, 0);
    v = 777;
    EXPECT_CODE(mcds_entry_list_get(top, 3, &data, &n, &v, &err), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_entry_list_get(top, SIZE_MAX, &data, &n, &v, &err), MCDS_INVALID_ARGUMENT);
    EXPECT(v == 777);
    mcds_entry_list_free(top);

    /* Full: dan replaces cy (1) and starts at 1 + 2 with error 1. */
    OK(mcds_leaderboard_incr(lb, BYTES("dan"), 3, 2, &v));
    EXPECT(v == 3);
    OK(mcds_leaderboard_score(lb, BYTES("dan"), 3, &found, &v, &err));
    EXPECT(found && v == 3 && err == 1);
    OK(mcds_leaderboard_score(lb, BYTES("cy"), 2, &found, &v, &err));
    EXPECT(!found && v == 0 && err == 0);
    OK(mcds_leaderboard_summary(lb, &sum));
    EXPECT(sum.total == 13 && !sum.exact && sum.max_error == 3 && sum.members == 3);
    EXPECT(sum.max_error <= sum.total / sum.capacity);
    OK(mcds_leaderboard_top(lb, 2, &top)); /* bob and dan tie at 3: bob first */
    OK(mcds_entry_list_len(top, &n));
    EXPECT(n == 2);
    expect_entry(top, 0, "ann", 7, 0);
    expect_entry(top, 1, "bob", 3, 0);
    mcds_entry_list_free(top);
    OK(mcds_leaderboard_top(lb, 0, &top));
    OK(mcds_entry_list_len(top, &n));
    EXPECT(n == 0);
    mcds_entry_list_free(top);
    OK(mcds_leaderboard_top(lb, SIZE_MAX, &top));
    OK(mcds_entry_list_len(top, &n));
    EXPECT(n == 3);
    expect_entry(top, 2, "dan", 3, 1);
    mcds_entry_list_free(top);

    /* Batches: in order, in one update; a bad increment counts nothing. */
    {
        const uint8_t *members[4] = {BYTES("ann"), BYTES("eve"), BYTES("ann"), NULL};
        size_t lens[4] = {3, 3, 3, 0};
        uint64_t bys[4] = {1, 10, 2, 1};
        const uint8_t *with_null[2] = {BYTES("ann"), NULL};
        size_t huge_lens[2] = {3, SIZE_MAX};
        uint64_t zero_bys[2] = {1, 0};
        const uint8_t *too_long[2] = {BYTES("ann"), BYTES(long_member)};
        size_t long_lens[2] = {3, 129};
        OK(mcds_leaderboard_incr_many(lb, members, lens, bys, 3));
        OK(mcds_leaderboard_score(lb, BYTES("ann"), 3, &found, &v, &err));
        EXPECT(found && v == 10 && err == 0);
        /* eve replaced bob or dan (3): 3 + 10 with error 3. */
        OK(mcds_leaderboard_score(lb, BYTES("eve"), 3, &found, &v, &err));
        EXPECT(found && v == 13 && err == 3);
        OK(mcds_leaderboard_incr_many(lb, NULL, NULL, NULL, 0));
        OK(mcds_leaderboard_summary(lb, &sum));
        EXPECT(sum.total == 26 && sum.members == 3);
        EXPECT_CODE(mcds_leaderboard_incr_many(NULL, members, lens, bys, 3), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, NULL, lens, bys, 3), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, members, NULL, bys, 3), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, members, lens, NULL, 3), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, with_null, long_lens, bys, 2), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, members, huge_lens, bys, 2), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, members, lens, bys, SIZE_MAX), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, members, lens, bys, 1000001), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, members, lens, zero_bys, 2), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_leaderboard_incr_many(lb, too_long, long_lens, bys, 2), MCDS_INVALID_ARGUMENT);
        EXPECT(strstr(mcds_last_error_message(), "128 bytes") != NULL);
        OK(mcds_leaderboard_summary(lb, &sum));
        EXPECT(sum.total == 26); /* nothing counted */
    }

    /* Bad single increments change nothing and write nothing. */
    v = 777;
    EXPECT_CODE(mcds_leaderboard_incr(lb, BYTES("ann"), 3, 0, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_leaderboard_incr(lb, BYTES(long_member), 129, 1, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_leaderboard_incr(lb, BYTES(long_member), SIZE_MAX, 1, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_leaderboard_incr(lb, BYTES("ann"), 3, UINT64_MAX, &v), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "2^64") != NULL);
    EXPECT(v == 777);
    OK(mcds_leaderboard_summary(lb, &sum));
    EXPECT(sum.total == 26);
    EXPECT_CODE(mcds_leaderboard_score(lb, BYTES(long_member), SIZE_MAX, &found, &v, &err),
                MCDS_INVALID_ARGUMENT);

    /* Another capacity on the same board is refused, not misread. */
    OK(mcds_leaderboard_new(store, "c-board", 5, &other));
    EXPECT_CODE(mcds_leaderboard_summary(other, &sum), MCDS_CORRUPT);
    EXPECT_CODE(mcds_leaderboard_incr(other, BYTES("ann"), 3, 1, &v), MCDS_CORRUPT);
    EXPECT(strstr(mcds_last_error_message(), "capacity 3") != NULL);
    mcds_leaderboard_free(other);

    /* 128 bytes and the empty member are members. */
    OK(mcds_leaderboard_new(store, "c-board-edge", 2, &other));
    OK(mcds_leaderboard_incr(other, BYTES(long_member), 128, 4, &v));
    EXPECT(v == 4);
    OK(mcds_leaderboard_incr(other, NULL, 0, 1, &v));
    EXPECT(v == 1);
    OK(mcds_leaderboard_score(other, NULL, 0, &found, &v, &err));
    EXPECT(found && v == 1 && err == 0);
    OK(mcds_leaderboard_top(other, 1, &top));
    OK(mcds_entry_list_get(top, 0, &data, &n, &v, &err));
    EXPECT(n == 128 && v == 4 && memcmp(data, long_member, 128) == 0);
    mcds_entry_list_free(top);
    OK(mcds_leaderboard_clear(other));
    mcds_leaderboard_free(other);

    /* with_ttl: the same board. */
    OK(mcds_leaderboard_with_ttl(lb, 3600, &timed));
    OK(mcds_leaderboard_incr(timed, BYTES("ann"), 3, 1, &v));
    EXPECT(v == 11);
    OK(mcds_leaderboard_capacity(timed, &cap));
    EXPECT(cap == 3);
    mcds_leaderboard_free(timed);

    OK(mcds_leaderboard_clear(lb));
    OK(mcds_leaderboard_clear(lb)); /* already gone: fine */
    OK(mcds_leaderboard_summary(lb, &sum));
    EXPECT(sum.total == 0 && sum.exact && sum.members == 0);

    {
        null_case cases[] = {
            NULL_CASE(mcds_leaderboard_new(NULL, "b", 3, &lb)),
            NULL_CASE(mcds_leaderboard_new(store, NULL, 3, &lb)),
            NULL_CASE(mcds_leaderboard_new(store, "b", 3, NULL)),
            NULL_CASE(mcds_leaderboard_with_ttl(NULL, 1, &timed)),
            NULL_CASE(mcds_leaderboard_with_ttl(lb, 1, NULL)),
            NULL_CASE(mcds_leaderboard_key(NULL, &data, &n)),
            NULL_CASE(mcds_leaderboard_key(lb, NULL, &n)),
            NULL_CASE(mcds_leaderboard_key(lb, &data, NULL)),
            NULL_CASE(mcds_leaderboard_capacity(NULL, &cap)),
            NULL_CASE(mcds_leaderboard_capacity(lb, NULL)),
            NULL_CASE(mcds_leaderboard_incr(NULL, BYTES("a"), 1, 1, &v)),
            NULL_CASE(mcds_leaderboard_incr(lb, NULL, 1, 1, &v)),
            NULL_CASE(mcds_leaderboard_incr(lb, BYTES("a"), 1, 1, NULL)),
            NULL_CASE(mcds_leaderboard_summary(NULL, &sum)),
            NULL_CASE(mcds_leaderboard_summary(lb, NULL)),
            NULL_CASE(mcds_leaderboard_top(NULL, 1, &top)),
            NULL_CASE(mcds_leaderboard_top(lb, 1, NULL)),
            NULL_CASE(mcds_leaderboard_score(NULL, BYTES("a"), 1, &found, &v, &err)),
            NULL_CASE(mcds_leaderboard_score(lb, NULL, 1, &found, &v, &err)),
            NULL_CASE(mcds_leaderboard_score(lb, BYTES("a"), 1, NULL, &v, &err)),
            NULL_CASE(mcds_leaderboard_score(lb, BYTES("a"), 1, &found, NULL, &err)),
            NULL_CASE(mcds_leaderboard_score(lb, BYTES("a"), 1, &found, &v, NULL)),
            NULL_CASE(mcds_leaderboard_clear(NULL)),
            NULL_CASE(mcds_entry_list_len(NULL, &n)),
            NULL_CASE(mcds_entry_list_len(no_list, NULL)),
            NULL_CASE(mcds_entry_list_get(NULL, 0, &data, &n, &v, &err)),
            NULL_CASE(mcds_entry_list_get(no_list, 0, NULL, &n, &v, &err)),
            NULL_CASE(mcds_entry_list_get(no_list, 0, &data, NULL, &v, &err)),
            NULL_CASE(mcds_entry_list_get(no_list, 0, &data, &n, NULL, &err)),
            NULL_CASE(mcds_entry_list_get(no_list, 0, &data, &n, &v, NULL)),
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            checks++;
            if (cases[i].got != MCDS_NULL_ARGUMENT) {
                failures++;
                fprintf(stderr, "%s returned %s, expected MCDS_NULL_ARGUMENT\n", cases[i].call,
                        mcds_result_name(cases[i].got));
            }
        }
    }
    mcds_leaderboard_free(lb);
    mcds_leaderboard_free(NULL);
    mcds_entry_list_free(NULL);
}

/* ---- ScalableBloomFilter: grows layers, never forgets. ---- */

#define SB_ADDED 1000

static void scalable_blooms(mcds_store *store) {
    mcds_scalable_bloom *sb = NULL, *g = NULL, *no_sb = (mcds_scalable_bloom *)0x1;
    char names[2 * SB_ADDED][8];
    const uint8_t *elements[2 * SB_ADDED];
    size_t lens[2 * SB_ADDED], layers = 777, n = 0, new_count = 0, false_positives = 0;
    bool contained[2 * SB_ADDED], b = false, all = true;
    const uint8_t *data = NULL;

    for (int i = 0; i < 2 * SB_ADDED; i++) {
        lens[i] = (size_t)snprintf(names[i], sizeof names[i], "e%d", i);
        elements[i] = BYTES(names[i]);
    }
    EXPECT_CODE(mcds_scalable_bloom_new(store, "c-sbloom", 0, 0.01, &no_sb), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_scalable_bloom_new(store, "c-sbloom", 100, 1.5, &no_sb), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_scalable_bloom_new(store, "c-sbloom", 100, 0.0, &no_sb), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_scalable_bloom_new(store, "", 100, 0.01, &no_sb), MCDS_INVALID_KEY);
    EXPECT(no_sb == (mcds_scalable_bloom *)0x1);
    OK(mcds_scalable_bloom_new(store, "c-sbloom", 100, 0.01, &sb));
    OK(mcds_scalable_bloom_header_key(sb, &data, &n));
    EXPECT(n == strlen("sbloom:c-sbloom:meta") && memcmp(data, "sbloom:c-sbloom:meta", n) == 0);
    OK(mcds_scalable_bloom_layers(sb, &layers));
    EXPECT(layers == 1);

    /* 1000 elements into a first layer of 100: 100, 200, 400, 800. */
    for (int i = 0; i < SB_ADDED; i++) {
        OK(mcds_scalable_bloom_add(sb, elements[i], lens[i], &b));
        new_count += b;
    }
    EXPECT(new_count > SB_ADDED - 20); /* a few false positives at most */
    OK(mcds_scalable_bloom_layers(sb, &layers));
    EXPECT(layers >= 4 && layers <= 6);
    OK(mcds_scalable_bloom_add(sb, elements[7], lens[7], &b));
    EXPECT(!b); /* already in */
    OK(mcds_scalable_bloom_contains_many(sb, elements, lens, 2 * SB_ADDED, contained));
    for (int i = 0; i < SB_ADDED; i++) {
        all = all && contained[i];
    }
    EXPECT(all); /* no false negatives */
    for (int i = SB_ADDED; i < 2 * SB_ADDED; i++) {
        false_positives += contained[i];
    }
    EXPECT(false_positives < 30); /* rate 0.01: about 10 expected */
    for (int i = 0; i < 2 * SB_ADDED; i += 97) {
        OK(mcds_scalable_bloom_contains(sb, elements[i], lens[i], &b));
        EXPECT(b == contained[i]);
    }
    OK(mcds_scalable_bloom_contains_many(sb, NULL, NULL, 0, NULL));

    /* Growth: out of range is refused; a filter made with growth 2 is not
     * misread with growth 4; a fresh one with 4 has fewer layers. */
    EXPECT_CODE(mcds_scalable_bloom_with_growth(sb, 0, &g), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_scalable_bloom_with_growth(sb, 17, &g), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_scalable_bloom_with_growth(sb, UINT32_MAX, &g), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "1 to 16") != NULL);
    EXPECT(g == NULL);
    OK(mcds_scalable_bloom_with_growth(sb, 4, &g));
    EXPECT_CODE(mcds_scalable_bloom_contains(g, elements[0], lens[0], &b), MCDS_CORRUPT);
    mcds_scalable_bloom_free(g);
    {
        mcds_scalable_bloom *fresh = NULL;
        size_t g_layers = 0;
        OK(mcds_scalable_bloom_new(store, "c-sbloom-g4", 100, 0.01, &fresh));
        OK(mcds_scalable_bloom_with_growth(fresh, 4, &g));
        mcds_scalable_bloom_free(fresh);
        for (int i = 0; i < SB_ADDED; i++) {
            OK(mcds_scalable_bloom_add(g, elements[i], lens[i], &b));
        }
        OK(mcds_scalable_bloom_layers(g, &g_layers));
        EXPECT(g_layers >= 2 && g_layers < layers); /* 100, 400, 1600 */
        OK(mcds_scalable_bloom_contains_many(g, elements, lens, SB_ADDED, contained));
        all = true;
        for (int i = 0; i < SB_ADDED; i++) {
            all = all && contained[i];
        }
        EXPECT(all);
        OK(mcds_scalable_bloom_clear(g));
        mcds_scalable_bloom_free(g);
    }

    /* Batches: bad input in every position writes nothing. */
    {
        const uint8_t *with_null[2] = {BYTES("a"), NULL};
        size_t null_lens[2] = {1, 1}, huge_lens[2] = {1, SIZE_MAX};
        bool kept[2] = {true, true};
        EXPECT_CODE(mcds_scalable_bloom_contains_many(NULL, elements, lens, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_contains_many(sb, NULL, lens, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_contains_many(sb, elements, NULL, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_contains_many(sb, elements, lens, 2, NULL), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_contains_many(sb, with_null, null_lens, 2, kept), MCDS_NULL_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_contains_many(sb, elements, huge_lens, 2, kept), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_contains_many(sb, elements, lens, SIZE_MAX, kept), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_contains_many(sb, elements, lens, 1000001, kept), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_scalable_bloom_add(sb, BYTES("a"), SIZE_MAX, &b), MCDS_INVALID_ARGUMENT);
        EXPECT(kept[0] && kept[1]);
    }

    /* The empty element is an element. */
    OK(mcds_scalable_bloom_add(sb, NULL, 0, &b));
    OK(mcds_scalable_bloom_contains(sb, NULL, 0, &b));
    EXPECT(b);

    OK(mcds_scalable_bloom_clear(sb));
    OK(mcds_scalable_bloom_layers(sb, &layers));
    EXPECT(layers == 1);
    OK(mcds_scalable_bloom_contains(sb, elements[7], lens[7], &b));
    EXPECT(!b);
    OK(mcds_scalable_bloom_clear(sb)); /* already empty: fine */

    {
        null_case cases[] = {
            NULL_CASE(mcds_scalable_bloom_new(NULL, "s", 100, 0.01, &sb)),
            NULL_CASE(mcds_scalable_bloom_new(store, NULL, 100, 0.01, &sb)),
            NULL_CASE(mcds_scalable_bloom_new(store, "s", 100, 0.01, NULL)),
            NULL_CASE(mcds_scalable_bloom_with_growth(NULL, 4, &g)),
            NULL_CASE(mcds_scalable_bloom_with_growth(sb, 4, NULL)),
            NULL_CASE(mcds_scalable_bloom_header_key(NULL, &data, &n)),
            NULL_CASE(mcds_scalable_bloom_header_key(sb, NULL, &n)),
            NULL_CASE(mcds_scalable_bloom_header_key(sb, &data, NULL)),
            NULL_CASE(mcds_scalable_bloom_add(NULL, BYTES("a"), 1, &b)),
            NULL_CASE(mcds_scalable_bloom_add(sb, NULL, 1, &b)),
            NULL_CASE(mcds_scalable_bloom_add(sb, BYTES("a"), 1, NULL)),
            NULL_CASE(mcds_scalable_bloom_contains(NULL, BYTES("a"), 1, &b)),
            NULL_CASE(mcds_scalable_bloom_contains(sb, NULL, 1, &b)),
            NULL_CASE(mcds_scalable_bloom_contains(sb, BYTES("a"), 1, NULL)),
            NULL_CASE(mcds_scalable_bloom_layers(NULL, &layers)),
            NULL_CASE(mcds_scalable_bloom_layers(sb, NULL)),
            NULL_CASE(mcds_scalable_bloom_clear(NULL)),
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            checks++;
            if (cases[i].got != MCDS_NULL_ARGUMENT) {
                failures++;
                fprintf(stderr, "%s returned %s, expected MCDS_NULL_ARGUMENT\n", cases[i].call,
                        mcds_result_name(cases[i].got));
            }
        }
    }
    mcds_scalable_bloom_free(sb);
    mcds_scalable_bloom_free(NULL);
}

/* A string mcds handed out: compared with `want`, then freed. */
static void expect_text(int line, char *got, const char *want) {
    checks++;
    if (got == NULL || strcmp(got, want) != 0) {
        failures++;
        fprintf(stderr, "%s:%d: got \"%s\", expected \"%s\" (last error: %s)\n", __FILE__, line,
                got != NULL ? got : "(NULL)", want, mcds_last_error_message());
    }
    mcds_string_free(got);
}

#define EXPECT_TEXT(got, want) expect_text(__LINE__, (got), (want))

/* Whether item `i` of `list` is the `len` bytes at `want`. */
static bool list_item_is(const mcds_bytes_list *list, size_t i, const void *want, size_t len) {
    const uint8_t *data = NULL;
    size_t n = 0;
    return mcds_bytes_list_get(list, i, &data, &n) == MCDS_OK && n == len && memcmp(data, want, len) == 0;
}

/* mcds_counter_map: signed fields (HINCRBY), exact decimals as text
 * (HINCRBYFLOAT without drift), the bounds, and bad input in every position. */
static void counter_maps(mcds_store *store) {
    mcds_counter_map *m = NULL, *plain = NULL, *money = NULL, *untouched = (mcds_counter_map *)0x1;
    mcds_bytes_list *fields = NULL, *texts = NULL;
    mcds_int_list *values = NULL;
    const int64_t *ints = NULL;
    const int64_t max_amount = ((int64_t)1 << 56) - 1;
    const char nul_field[] = {'a', '\0', 'b'};
    char long_field[1025];
    char *s = NULL, *sentinel = (char *)0x1;
    int64_t v = 0;
    uint32_t places = 99;
    size_t n = 0;
    bool b = false;

    OK(mcds_counter_map_new(store, "c-stock", &m));
    OK(mcds_counter_map_is_empty(m, &b));
    EXPECT(b);
    OK(mcds_counter_map_incr(m, BYTES("apples"), 6, 10, &v));
    EXPECT(v == 10);
    OK(mcds_counter_map_incr(m, BYTES("pears"), 5, 3, &v));
    EXPECT(v == 3);
    OK(mcds_counter_map_incr(m, BYTES("apples"), 6, -12, &v));
    EXPECT(v == -2);
    OK(mcds_counter_map_incr(m, BYTES(nul_field), sizeof nul_field, -5, &v));
    EXPECT(v == -5);
    OK(mcds_counter_map_get(m, BYTES("apples"), 6, &v));
    EXPECT(v == -2);
    OK(mcds_counter_map_get(m, BYTES("plums"), 5, &v));
    EXPECT(v == 0);
    OK(mcds_counter_map_len(m, &n));
    EXPECT(n == 3);
    OK(mcds_counter_map_is_empty(m, &b));
    EXPECT(!b);
    /* HGETALL: two parallel lists, in first-registration order. */
    OK(mcds_counter_map_get_all(m, &fields, &values));
    OK(mcds_bytes_list_len(fields, &n));
    EXPECT(n == 3);
    OK(mcds_int_list_data(values, &ints, &n));
    EXPECT(n == 3 && ints[0] == -2 && ints[1] == 3 && ints[2] == -5);
    EXPECT(list_item_is(fields, 0, "apples", 6) && list_item_is(fields, 1, "pears", 5) &&
           list_item_is(fields, 2, nul_field, sizeof nul_field));
    mcds_bytes_list_free(fields);
    mcds_int_list_free(values);
    OK(mcds_counter_map_get_all_decimal(m, &fields, &texts));
    EXPECT(list_item_is(texts, 0, "-2", 2) && list_item_is(texts, 1, "3", 1) && list_item_is(texts, 2, "-5", 2));
    EXPECT(list_item_is(fields, 1, "pears", 5));
    mcds_bytes_list_free(fields);
    mcds_bytes_list_free(texts);
    /* HDEL */
    OK(mcds_counter_map_remove(m, BYTES("pears"), 5, &b));
    EXPECT(b);
    OK(mcds_counter_map_remove(m, BYTES("pears"), 5, &b));
    EXPECT(!b);
    OK(mcds_counter_map_fields(m, &fields));
    OK(mcds_bytes_list_len(fields, &n));
    EXPECT(n == 2 && list_item_is(fields, 0, "apples", 6) && list_item_is(fields, 1, nul_field, sizeof nul_field));
    mcds_bytes_list_free(fields);
    /* Accessors. */
    OK(mcds_counter_map_name(m, &s));
    EXPECT_TEXT(s, "c-stock");
    OK(mcds_counter_map_scale(m, &places));
    EXPECT(places == 0);
    OK(mcds_counter_map_registry_key(m, &s));
    EXPECT_TEXT(s, "cmap:c-stock:fields");
    OK(mcds_counter_map_field_key(m, BYTES("apples"), 6, &s));
    EXPECT(s != NULL && strncmp(s, "cmap:c-stock:v:", 15) == 0 && strlen(s) >= 15 + 32);
    mcds_string_free(s);

    /* Bounds: one call adds at most 2^56 - 1 either way; a field holds
     * -2^61 .. 2^61 - 1; past the top is undone and refused, decrements
     * stop at the bottom. */
    v = 777;
    EXPECT_CODE(mcds_counter_map_incr(m, BYTES("big"), 3, max_amount + 1, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_counter_map_incr(m, BYTES("big"), 3, -max_amount - 1, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_counter_map_incr(m, BYTES("big"), 3, INT64_MIN, &v), MCDS_INVALID_ARGUMENT);
    EXPECT(v == 777);
    for (int i = 0; i < 32; i++) {
        OK(mcds_counter_map_incr(m, BYTES("big"), 3, max_amount, &v));
    }
    EXPECT(v == ((int64_t)1 << 61) - 32);
    EXPECT_CODE(mcds_counter_map_incr(m, BYTES("big"), 3, max_amount, &v), MCDS_INVALID_ARGUMENT);
    EXPECT(v == ((int64_t)1 << 61) - 32);
    OK(mcds_counter_map_get(m, BYTES("big"), 3, &v));
    EXPECT(v == ((int64_t)1 << 61) - 32); /* the refused increment was undone */
    for (int i = 0; i < 33; i++) {
        OK(mcds_counter_map_incr(m, BYTES("small"), 5, -max_amount, &v));
    }
    EXPECT(v == -((int64_t)1 << 61)); /* saturated */

    /* Fields: 1 to 1024 bytes of UTF-8. */
    memset(long_field, 'f', sizeof long_field);
    OK(mcds_counter_map_incr(m, BYTES(long_field), 1024, 1, &v));
    EXPECT(v == 1);
    v = 777;
    EXPECT_CODE(mcds_counter_map_incr(m, BYTES(long_field), 1025, 1, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_counter_map_incr(m, NULL, 0, 1, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_counter_map_get(m, BYTES(""), 0, &v), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_counter_map_incr(m, BYTES("\xff\xfe"), 2, 1, &v), MCDS_INVALID_UTF8);
    EXPECT_CODE(mcds_counter_map_remove(m, BYTES("\xc3\x28"), 2, &b), MCDS_INVALID_UTF8);
    EXPECT_CODE(mcds_counter_map_field_key(m, BYTES("x"), SIZE_MAX, &sentinel), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_counter_map_get(m, BYTES("x"), SIZE_MAX, &v), MCDS_INVALID_ARGUMENT);
    EXPECT(v == 777 && sentinel == (char *)0x1);
    /* A NULL output: refused before anything is sent. */
    EXPECT_CODE(mcds_counter_map_incr(m, BYTES("apples"), 6, 100, NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_counter_map_get(m, BYTES("apples"), 6, &v));
    EXPECT(v == -2);

    /* Decimals at scale 1: exact, signed, as text. */
    EXPECT_CODE(mcds_counter_map_with_scale(m, 19, &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(untouched == (mcds_counter_map *)0x1);
    OK(mcds_counter_map_new(store, "c-money", &plain));
    OK(mcds_counter_map_with_scale(plain, 1, &money));
    OK(mcds_counter_map_scale(money, &places));
    EXPECT(places == 1);
    OK(mcds_counter_map_scale(plain, &places));
    EXPECT(places == 0); /* unchanged */
    for (int i = 0; i < 1000; i++) {
        char *t = NULL;
        OK(mcds_counter_map_incr_decimal(money, BYTES("ann"), 3, "0.1", &t));
        if (i < 999) {
            mcds_string_free(t);
        } else {
            s = t;
        }
    }
    EXPECT_TEXT(s, "100.0");
    OK(mcds_counter_map_get_decimal(money, BYTES("ann"), 3, &s));
    EXPECT_TEXT(s, "100.0");
    OK(mcds_counter_map_get(money, BYTES("ann"), 3, &v));
    EXPECT(v == 1000);
    OK(mcds_counter_map_get(plain, BYTES("ann"), 3, &v));
    EXPECT(v == 1000); /* the same counter, in units */
    OK(mcds_counter_map_incr_decimal(money, BYTES("ann"), 3, "-0.50", &s)); /* zeros past the scale */
    EXPECT_TEXT(s, "99.5");
    OK(mcds_counter_map_incr_f64(money, BYTES("ann"), 3, 0.1, &s));
    EXPECT_TEXT(s, "99.6");
    OK(mcds_counter_map_incr_f64(money, BYTES("ann"), 3, -0.05, &s)); /* rounded away from zero */
    EXPECT_TEXT(s, "99.5");
    OK(mcds_counter_map_incr_decimal(money, BYTES("bob"), 3, "-1.5", &s));
    EXPECT_TEXT(s, "-1.5");
    OK(mcds_counter_map_incr_decimal(money, BYTES("bob"), 3, "+0.5", &s));
    EXPECT_TEXT(s, "-1.0");
    OK(mcds_counter_map_get_decimal(money, BYTES("carol"), 5, &s));
    EXPECT_TEXT(s, "0.0");
    OK(mcds_counter_map_get_all_decimal(money, &fields, &texts));
    OK(mcds_bytes_list_len(texts, &n));
    EXPECT(n == 2 && list_item_is(fields, 0, "ann", 3) && list_item_is(texts, 0, "99.5", 4) &&
           list_item_is(fields, 1, "bob", 3) && list_item_is(texts, 1, "-1.0", 4));
    mcds_bytes_list_free(fields);
    mcds_bytes_list_free(texts);
    {
        /* Refused before anything is sent: nothing written, nothing added. */
        const char *bad[] = {"0.05", "", "-", "1.", ".5", "1e3", "0x10", " 1", "1,5", "--1",
                             "99999999999999999999", "1.0.0"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            EXPECT_CODE(mcds_counter_map_incr_decimal(money, BYTES("ann"), 3, bad[i], &sentinel),
                        MCDS_INVALID_ARGUMENT);
        }
        EXPECT(strstr(mcds_last_error_message(), "1.0.0") != NULL);
        EXPECT_CODE(mcds_counter_map_incr_decimal(money, BYTES("ann"), 3, "\xff", &sentinel), MCDS_INVALID_UTF8);
        EXPECT_CODE(mcds_counter_map_incr_decimal(money, BYTES("ann"), 3, "7205759403792794", &sentinel),
                    MCDS_INVALID_ARGUMENT); /* 2^56 units at scale 1 */
        EXPECT_CODE(mcds_counter_map_incr_f64(money, BYTES("ann"), 3, NAN, &sentinel), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_counter_map_incr_f64(money, BYTES("ann"), 3, -INFINITY, &sentinel), MCDS_INVALID_ARGUMENT);
        EXPECT_CODE(mcds_counter_map_incr_f64(money, BYTES("ann"), 3, 1e300, &sentinel), MCDS_INVALID_ARGUMENT);
        EXPECT(sentinel == (char *)0x1);
        OK(mcds_counter_map_get_decimal(money, BYTES("ann"), 3, &s));
        EXPECT_TEXT(s, "99.5");
    }
    {
        mcds_counter_map *wide = NULL;
        OK(mcds_counter_map_with_scale(plain, 18, &wide));
        OK(mcds_counter_map_incr_decimal(wide, BYTES("tiny"), 4, "-0.000000000000000001", &s));
        EXPECT_TEXT(s, "-0.000000000000000001");
        mcds_counter_map_free(wide);
    }
    {
        null_case cases[] = {
            NULL_CASE(mcds_counter_map_new(NULL, "m", &m)),
            NULL_CASE(mcds_counter_map_new(store, NULL, &m)),
            NULL_CASE(mcds_counter_map_new(store, "m", NULL)),
            NULL_CASE(mcds_counter_map_with_scale(NULL, 1, &money)),
            NULL_CASE(mcds_counter_map_with_scale(m, 1, NULL)),
            NULL_CASE(mcds_counter_map_name(NULL, &s)),
            NULL_CASE(mcds_counter_map_name(m, NULL)),
            NULL_CASE(mcds_counter_map_scale(NULL, &places)),
            NULL_CASE(mcds_counter_map_scale(m, NULL)),
            NULL_CASE(mcds_counter_map_registry_key(NULL, &s)),
            NULL_CASE(mcds_counter_map_registry_key(m, NULL)),
            NULL_CASE(mcds_counter_map_field_key(NULL, BYTES("f"), 1, &s)),
            NULL_CASE(mcds_counter_map_field_key(m, NULL, 1, &s)),
            NULL_CASE(mcds_counter_map_field_key(m, BYTES("f"), 1, NULL)),
            NULL_CASE(mcds_counter_map_incr(NULL, BYTES("f"), 1, 1, &v)),
            NULL_CASE(mcds_counter_map_incr(m, NULL, 1, 1, &v)),
            NULL_CASE(mcds_counter_map_incr(m, BYTES("f"), 1, 1, NULL)),
            NULL_CASE(mcds_counter_map_incr_decimal(NULL, BYTES("f"), 1, "1", &s)),
            NULL_CASE(mcds_counter_map_incr_decimal(m, NULL, 1, "1", &s)),
            NULL_CASE(mcds_counter_map_incr_decimal(m, BYTES("f"), 1, NULL, &s)),
            NULL_CASE(mcds_counter_map_incr_decimal(m, BYTES("f"), 1, "1", NULL)),
            NULL_CASE(mcds_counter_map_incr_f64(NULL, BYTES("f"), 1, 1.0, &s)),
            NULL_CASE(mcds_counter_map_incr_f64(m, NULL, 1, 1.0, &s)),
            NULL_CASE(mcds_counter_map_incr_f64(m, BYTES("f"), 1, 1.0, NULL)),
            NULL_CASE(mcds_counter_map_get(NULL, BYTES("f"), 1, &v)),
            NULL_CASE(mcds_counter_map_get(m, NULL, 1, &v)),
            NULL_CASE(mcds_counter_map_get(m, BYTES("f"), 1, NULL)),
            NULL_CASE(mcds_counter_map_get_decimal(NULL, BYTES("f"), 1, &s)),
            NULL_CASE(mcds_counter_map_get_decimal(m, NULL, 1, &s)),
            NULL_CASE(mcds_counter_map_get_decimal(m, BYTES("f"), 1, NULL)),
            NULL_CASE(mcds_counter_map_get_all(NULL, &fields, &values)),
            NULL_CASE(mcds_counter_map_get_all(m, NULL, &values)),
            NULL_CASE(mcds_counter_map_get_all(m, &fields, NULL)),
            NULL_CASE(mcds_counter_map_get_all_decimal(NULL, &fields, &texts)),
            NULL_CASE(mcds_counter_map_get_all_decimal(m, NULL, &texts)),
            NULL_CASE(mcds_counter_map_get_all_decimal(m, &fields, NULL)),
            NULL_CASE(mcds_counter_map_fields(NULL, &fields)),
            NULL_CASE(mcds_counter_map_fields(m, NULL)),
            NULL_CASE(mcds_counter_map_len(NULL, &n)),
            NULL_CASE(mcds_counter_map_len(m, NULL)),
            NULL_CASE(mcds_counter_map_is_empty(NULL, &b)),
            NULL_CASE(mcds_counter_map_is_empty(m, NULL)),
            NULL_CASE(mcds_counter_map_remove(NULL, BYTES("f"), 1, &b)),
            NULL_CASE(mcds_counter_map_remove(m, NULL, 1, &b)),
            NULL_CASE(mcds_counter_map_remove(m, BYTES("f"), 1, NULL)),
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            checks++;
            if (cases[i].got != MCDS_NULL_ARGUMENT) {
                failures++;
                fprintf(stderr, "%s returned %s, expected MCDS_NULL_ARGUMENT\n", cases[i].call,
                        mcds_result_name(cases[i].got));
            }
        }
    }
    /* Nothing above created a field. */
    OK(mcds_counter_map_fields(m, &fields));
    OK(mcds_bytes_list_len(fields, &n));
    EXPECT(n == 5); /* apples, a\0b, big, small, the 1024-byte field */
    mcds_bytes_list_free(fields);
    mcds_counter_map_free(m);
    mcds_counter_map_free(plain);
    mcds_counter_map_free(money);
    mcds_counter_map_free(NULL);
}

/* 4 forked processes x 10 000 increments: exactly 40 000. */
static void forked_counter(const char *servers) {
    mcds_store *store = NULL;
    mcds_counter *c = NULL;
    uint64_t v = 0;
    pid_t pids[4];
    for (int p = 0; p < 4; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            /* Each child opens its own store: no connection is shared. */
            mcds_store *s = NULL;
            mcds_counter *cc = NULL;
            uint64_t out = 0;
            int bad = 0;
            if (mcds_store_new_memcached(servers, &s) != MCDS_OK) _exit(2);
            if (mcds_counter_new(s, "c-forked", &cc) != MCDS_OK) _exit(3);
            for (int i = 0; i < 10000; i++) {
                if (mcds_counter_incr(cc, 1, &out) != MCDS_OK) bad++;
            }
            mcds_counter_free(cc);
            mcds_store_free(s);
            _exit(bad == 0 ? 0 : 4);
        }
        EXPECT(pids[p] > 0);
    }
    for (int p = 0; p < 4; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    OK(mcds_store_new_memcached(servers, &store));
    OK(mcds_counter_new(store, "c-forked", &c));
    OK(mcds_counter_get(c, &v));
    EXPECT(v == 40000);
    printf("c: 4 forked processes x 10000 increments = %llu\n", (unsigned long long)v);
    mcds_counter_free(c);
    mcds_store_free(store);
}

/* mcds_store_new_url: one string for the store and its options. */
/* Cancellation tokens: a call under a triggered token returns
 * MCDS_CANCELLED before it waits; without a token the thread's calls run
 * as before. (A call cancelled while it waits on a stopped server is
 * tested from Python, bindings/python/tests/test_aio.py, which can stop
 * the memcached it started. Here no call waits under a token: a wait makes
 * the thread's waker, which the main thread never frees, and valgrind
 * would report it; nor on a thread of its own, whose cached stack then
 * makes valgrind report the lock renewer's as possibly lost.) */
static void cancellation(mcds_store *memory, mcds_store *memcached) {
    mcds_cancel *token = NULL;
    mcds_counter *c = NULL, *remote = NULL;
    uint64_t v = 0;
    EXPECT_CODE(mcds_cancel_new(NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_cancel_trigger(NULL), MCDS_NULL_ARGUMENT);
    OK(mcds_cancel_new(&token));
    OK(mcds_counter_new(memory, "c-cancel", &c));
    OK(mcds_counter_new(memcached, "c-cancel", &remote));
    OK(mcds_counter_reset(c));
    OK(mcds_counter_reset(remote));
    mcds_lock *held = NULL, *other = NULL;
    bool acquired = false;
    OK(mcds_lock_new(memcached, "c-cancel-lock", 30, &held));
    OK(mcds_lock_new(memcached, "c-cancel-lock", 30, &other));
    OK(mcds_lock_try_acquire(held, &acquired));
    EXPECT(acquired);
    OK(mcds_cancel_set_current(token));
    OK(mcds_counter_incr(c, 1, &v)); /* the embedded store never waits */
    EXPECT(v == 1);
    OK(mcds_cancel_trigger(token));
    OK(mcds_cancel_trigger(token)); /* idempotent */
    EXPECT_CODE(mcds_counter_incr(c, 1, &v), MCDS_CANCELLED);
    EXPECT(strstr(mcds_last_error_message(), "cancelled") != NULL);
    EXPECT_CODE(mcds_counter_incr(remote, 1, &v), MCDS_CANCELLED);
    EXPECT(strcmp(mcds_result_name(MCDS_CANCELLED), "MCDS_CANCELLED") == 0);
    /* The thread keeps its own reference: the token may be freed while
     * current. */
    mcds_cancel_free(token);
    EXPECT_CODE(mcds_counter_get(remote, &v), MCDS_CANCELLED);
    /* A free is never cancelled: the lock's lease is released. */
    mcds_lock_free(held);
    OK(mcds_cancel_set_current(NULL));
    OK(mcds_lock_try_acquire(other, &acquired));
    EXPECT(acquired);
    /* A later failure has its own code, not MCDS_CANCELLED. */
    EXPECT_CODE(mcds_counter_incr(NULL, 1, &v), MCDS_NULL_ARGUMENT);
    mcds_lock_free(other);
    OK(mcds_counter_get(c, &v));
    EXPECT(v == 1);
    OK(mcds_counter_get(remote, &v));
    EXPECT(v == 0); /* the cancelled increment was never sent */
    mcds_cancel_free(NULL);
    mcds_counter_free(c);
    mcds_counter_free(remote);
}

static void store_urls(const char *servers) {
    mcds_store *s = NULL, *plain = NULL, *untouched = (mcds_store *)0x1;
    mcds_counter *c1 = NULL, *c2 = NULL;
    uint64_t v = 0;
    char url[512];
    snprintf(url, sizeof url, "memcached://%s?ketama&timeout_ms=500&prefix=c-url%%2F", servers);
    OK(mcds_store_new_url(url, &s));
    OK(mcds_counter_new(s, "hits", &c1));
    OK(mcds_counter_incr(c1, 3, &v));
    EXPECT(v == 3);
    /* The prefix is the one mcds_store_with_prefix gives. */
    OK(mcds_store_new_memcached(servers, &plain));
    {
        mcds_store *prefixed = NULL;
        OK(mcds_store_with_prefix(plain, "c-url/", &prefixed));
        OK(mcds_counter_new(prefixed, "hits", &c2));
        OK(mcds_counter_get(c2, &v));
        EXPECT(v == 3);
        mcds_counter_free(c2);
        mcds_store_free(prefixed);
    }
    mcds_counter_free(c1);
    mcds_store_free(s);
    mcds_store_free(plain);
    /* No scheme: the server list. The embedded store with its options. */
    OK(mcds_store_new_url(servers, &s));
    mcds_store_free(s);
    OK(mcds_store_new_url("memory://?memory_limit=1m&evict=false&prefix=m/", &s));
    OK(mcds_counter_new(s, "hits", &c1));
    OK(mcds_counter_incr(c1, 1, &v));
    EXPECT(v == 1);
    mcds_counter_free(c1);
    mcds_store_free(s);
    /* Mistakes: named, and nothing written to *out. */
    EXPECT_CODE(mcds_store_new_url(NULL, &s), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_new_url("memory://", NULL), MCDS_NULL_ARGUMENT);
    EXPECT_CODE(mcds_store_new_url("memcached://a:1?colour=blue", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "colour") != NULL);
    EXPECT_CODE(mcds_store_new_url("memcached://a:1?timeout_ms=0", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_new_url("memory://?ketama", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_new_url("memcached://", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_new_url("", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_new_url("memory://?prefix=a%20b", &untouched), MCDS_INVALID_KEY);
    EXPECT_CODE(mcds_store_new_url("memory://?prefix=\xc3\x28", &untouched), MCDS_INVALID_UTF8);
    /* TLS files are read when the store is made; credentials never show. */
    EXPECT_CODE(mcds_store_new_url("memcached+tls://127.0.0.1:1?ca_file=/nonexistent/ca.pem", &untouched),
                MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "/nonexistent/ca.pem") != NULL);
    EXPECT_CODE(mcds_store_new_url("memcached://127.0.0.1:1?ca_file=/ca.pem", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT_CODE(mcds_store_new_url("memcached://u:hunter2%20x@127.0.0.1:1", &untouched), MCDS_INVALID_ARGUMENT);
    EXPECT(strstr(mcds_last_error_message(), "hunter2") == NULL);
    EXPECT(untouched == (mcds_store *)0x1);
    /* A unix socket and credentials make stores (connections on first use). */
    mcds_store *lazy = NULL;
    OK(mcds_store_new_url("unix:/nonexistent/memcached.sock", &lazy));
    mcds_counter *c = NULL;
    OK(mcds_counter_new(lazy, "unix", &c));
    uint64_t n = 0;
    EXPECT_CODE(mcds_counter_incr(c, 1, &n), MCDS_IO);
    EXPECT(strstr(mcds_last_error_message(), "/nonexistent/memcached.sock") != NULL);
    mcds_counter_free(c);
    mcds_store_free(lazy);
    lazy = NULL;
    OK(mcds_store_new_url("memcached://u:hunter2@127.0.0.1:1", &lazy));
    mcds_store_free(lazy);
}

/* A lock on a quorum of three servers (MCDS_TEST_QUORUM=a,b,c): held on a
 * majority, one holder at a time, fencing tokens; nothing but locks. */
static void quorum_locks(const char *servers) {
    char url[512];
    mcds_store *q = NULL;
    mcds_lock *plain = NULL, *a = NULL, *b = NULL;
    mcds_counter *c = NULL;
    bool acquired = false, released = false;
    uint64_t t1 = 0, t2 = 0, v = 0;
    snprintf(url, sizeof url, "memcached://%s?quorum&timeout_ms=300", servers);
    OK(mcds_store_new_url(url, &q));
    OK(mcds_lock_new(q, "c-quorum", 10, &plain));
    OK(mcds_lock_with_fencing(plain, true, &a));
    OK(mcds_lock_with_fencing(plain, true, &b));
    OK(mcds_lock_try_acquire(a, &acquired));
    EXPECT(acquired);
    OK(mcds_lock_fencing_token(a, &t1));
    OK(mcds_lock_try_acquire(b, &acquired));
    EXPECT(!acquired);
    OK(mcds_lock_release(a, &released));
    EXPECT(released);
    OK(mcds_lock_acquire(b, 1000));
    OK(mcds_lock_fencing_token(b, &t2));
    EXPECT(t2 > t1);
    OK(mcds_lock_release(b, &released));
    EXPECT(released);
    OK(mcds_counter_new(q, "c-quorum-counter", &c));
    EXPECT_CODE(mcds_counter_incr(c, 1, &v), MCDS_UNSUPPORTED);
    mcds_counter_free(c);
    mcds_lock_free(a);
    mcds_lock_free(b);
    mcds_lock_free(plain);
    mcds_store_free(q);
}

int main(void) {
    const char *servers = getenv("MCDS_TEST_SERVERS");
    mcds_store *memory = NULL, *memcached = NULL;
    if (servers == NULL) {
        fprintf(stderr, "set MCDS_TEST_SERVERS=host:port\n");
        return 2;
    }
    printf("c: libmcds %s\n", mcds_version());
    OK(mcds_store_new_memory(&memory));
    OK(mcds_store_new_memcached(servers, &memcached));
    counters(memory);
    counters(memcached);
    locks(memory);
    locks(memcached);
    sets(memory);
    sets(memcached);
    more_structures(memory);
    more_structures(memcached);
    sketches(memory);
    sketches(memcached);
    bad_input(memory);
    bad_input(memcached);
    store_options(servers);
    store_urls(servers);
    lock_leases(memory);
    lock_leases(memcached);
    more_counters(memory);
    more_counters(memcached);
    more_sets(memory);
    more_sets(memcached);
    feeds_and_entries(memory);
    feeds_and_entries(memcached);
    hll_union(memory, memcached);
    counter_batches(memory, memcached);
    counter_batches(memcached, memory);
    exact_keys(memory);
    exact_keys(memcached);
    sketch_batches(memory);
    sketch_batches(memcached);
    ttl_expiry(memory, memcached);
    two_threads(memory);
    two_threads(memcached);
    store_updates(memory);
    store_updates(memcached);
    nulls_everywhere(memory);
    nulls_everywhere(memcached);
    timeseries(memory, false);
    timeseries(memcached, true);
    packed_series(memory, false);
    packed_series(memcached, true);
    leaderboards(memory);
    leaderboards(memcached);
    scalable_blooms(memory);
    scalable_blooms(memcached);
    counter_maps(memory);
    counter_maps(memcached);
    cancellation(memory, memcached);
    if (getenv("MCDS_TEST_QUORUM") != NULL) {
        quorum_locks(getenv("MCDS_TEST_QUORUM"));
    }
    if (getenv("MCDS_TEST_NO_FORK") == NULL) {
        forked_counter(servers);
    }
    mcds_store_free(memory);
    mcds_store_free(memcached);
    printf("c: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
