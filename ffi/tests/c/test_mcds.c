/* libmcds from C: every function, bad input in every position, and 4 forked
 * processes incrementing one counter. Needs MCDS_TEST_SERVERS=host:port. */
#include "mcds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
    if (getenv("MCDS_TEST_NO_FORK") == NULL) {
        forked_counter(servers);
    }
    mcds_store_free(memory);
    mcds_store_free(memcached);
    printf("c: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
