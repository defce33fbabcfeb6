"""libmcds from Python through ctypes, against real memcached.

Needs MCDS_LIB (path to libmcds.so) and MCDS_TEST_SERVERS (host:port).
"""
import ctypes
import os
import sys

lib = ctypes.CDLL(os.environ["MCDS_LIB"])
servers = os.environ["MCDS_TEST_SERVERS"].encode()

MCDS_OK, MCDS_NULL_ARGUMENT, MCDS_INVALID_UTF8 = 0, 1, 2
MCDS_INVALID_KEY, MCDS_WAIT_TIMEOUT = 100, 302

P = ctypes.c_void_p
u8p = ctypes.POINTER(ctypes.c_uint8)
for name, args in {
    "mcds_store_new_memcached": [ctypes.c_char_p, ctypes.POINTER(P)],
    "mcds_counter_new": [P, ctypes.c_char_p, ctypes.POINTER(P)],
    "mcds_counter_incr": [P, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)],
    "mcds_counter_get": [P, ctypes.POINTER(ctypes.c_uint64)],
    "mcds_lock_new": [P, ctypes.c_char_p, ctypes.c_uint32, ctypes.POINTER(P)],
    "mcds_lock_try_acquire": [P, ctypes.POINTER(ctypes.c_bool)],
    "mcds_lock_acquire": [P, ctypes.c_uint32],
    "mcds_lock_release": [P, ctypes.POINTER(ctypes.c_bool)],
    "mcds_set_new": [P, ctypes.c_char_p, ctypes.POINTER(P)],
    "mcds_set_add": [P, ctypes.c_char_p, ctypes.c_size_t],
    "mcds_set_remove": [P, ctypes.c_char_p, ctypes.c_size_t],
    "mcds_set_contains": [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_bool)],
    "mcds_set_members": [P, ctypes.POINTER(P)],
    "mcds_bytes_list_len": [P, ctypes.POINTER(ctypes.c_size_t)],
    "mcds_bytes_list_get": [P, ctypes.c_size_t, ctypes.POINTER(u8p), ctypes.POINTER(ctypes.c_size_t)],
    "mcds_hll_new": [P, ctypes.c_char_p, ctypes.POINTER(P)],
    "mcds_hll_add": [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_bool)],
    "mcds_hll_count": [P, ctypes.POINTER(ctypes.c_uint64)],
    "mcds_bloom_new": [P, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_double, ctypes.POINTER(P)],
    "mcds_bloom_add": [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_bool)],
    "mcds_bloom_contains": [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_bool)],
}.items():
    fn = getattr(lib, name)
    fn.argtypes = args
    fn.restype = ctypes.c_uint32
for name in ["mcds_store_free", "mcds_counter_free", "mcds_lock_free", "mcds_set_free", "mcds_bytes_list_free",
             "mcds_hll_free", "mcds_bloom_free"]:
    getattr(lib, name).argtypes = [P]
    getattr(lib, name).restype = None
lib.mcds_result_name.argtypes = [ctypes.c_uint32]
lib.mcds_result_name.restype = ctypes.c_char_p
lib.mcds_last_error_message.restype = ctypes.c_char_p

checks = 0


def ok(code, want=MCDS_OK):
    global checks
    checks += 1
    if code != want:
        raise AssertionError("got %s, expected %s: %s" % (
            lib.mcds_result_name(code).decode(), lib.mcds_result_name(want).decode(),
            lib.mcds_last_error_message().decode()))


store = P()
ok(lib.mcds_store_new_memcached(servers, ctypes.byref(store)))

counter = P()
value = ctypes.c_uint64()
ok(lib.mcds_counter_new(store, b"py-hits", ctypes.byref(counter)))
for _ in range(100):
    ok(lib.mcds_counter_incr(counter, 1, ctypes.byref(value)))
ok(lib.mcds_counter_get(counter, ctypes.byref(value)))
assert value.value == 100, value.value

lock, other = P(), P()
flag = ctypes.c_bool()
ok(lib.mcds_lock_new(store, b"py-job", 30, ctypes.byref(lock)))
ok(lib.mcds_lock_new(store, b"py-job", 30, ctypes.byref(other)))
ok(lib.mcds_lock_try_acquire(lock, ctypes.byref(flag)))
assert flag.value
ok(lib.mcds_lock_acquire(other, 50), MCDS_WAIT_TIMEOUT)
ok(lib.mcds_lock_release(lock, ctypes.byref(flag)))
assert flag.value

s = P()
ok(lib.mcds_set_new(store, b"py-tags", ctypes.byref(s)))
for member in [b"python", b"with space", b"\x00\xff"]:
    ok(lib.mcds_set_add(s, member, len(member)))
ok(lib.mcds_set_remove(s, b"python", 6))
ok(lib.mcds_set_contains(s, b"with space", 10, ctypes.byref(flag)))
assert flag.value
members = P()
n = ctypes.c_size_t()
ok(lib.mcds_set_members(s, ctypes.byref(members)))
ok(lib.mcds_bytes_list_len(members, ctypes.byref(n)))
got = []
for i in range(n.value):
    data, length = u8p(), ctypes.c_size_t()
    ok(lib.mcds_bytes_list_get(members, i, ctypes.byref(data), ctypes.byref(length)))
    got.append(ctypes.string_at(data, length.value))
assert got == [b"with space", b"\x00\xff"], got
lib.mcds_bytes_list_free(members)

# Sketches: a HyperLogLog of page views and a Bloom filter of user names.
hll, bloom, flag = P(), P(), ctypes.c_bool()
ok(lib.mcds_hll_new(store, b"py-pages", ctypes.byref(hll)))
for i in range(300):
    page = b"/page/%d" % (i % 100)
    ok(lib.mcds_hll_add(hll, page, len(page), ctypes.byref(flag)))
ok(lib.mcds_hll_count(hll, ctypes.byref(value)))
assert 97 <= value.value <= 103, value.value
ok(lib.mcds_bloom_new(store, b"py-users", 1000, 0.01, ctypes.byref(bloom)))
ok(lib.mcds_bloom_add(bloom, b"ann", 3, ctypes.byref(flag)))
assert flag.value
ok(lib.mcds_bloom_contains(bloom, b"ann", 3, ctypes.byref(flag)))
assert flag.value
ok(lib.mcds_bloom_contains(bloom, b"bob", 3, ctypes.byref(flag)))
assert not flag.value
ok(lib.mcds_bloom_new(store, b"py-bad", 1000, 2.0, ctypes.byref(P())), 102)
lib.mcds_hll_free(hll)
lib.mcds_bloom_free(bloom)

# Bad input: documented codes, no crash.
ok(lib.mcds_counter_new(None, b"x", ctypes.byref(counter)), MCDS_NULL_ARGUMENT)
ok(lib.mcds_counter_new(store, None, ctypes.byref(counter)), MCDS_NULL_ARGUMENT)
ok(lib.mcds_counter_new(store, b"bad key", ctypes.byref(counter)), MCDS_INVALID_KEY)
ok(lib.mcds_counter_new(store, b"\xff", ctypes.byref(counter)), MCDS_INVALID_UTF8)
ok(lib.mcds_counter_incr(counter, 1, None), MCDS_NULL_ARGUMENT)

for handle, free in [(counter, lib.mcds_counter_free), (lock, lib.mcds_lock_free), (other, lib.mcds_lock_free),
                     (s, lib.mcds_set_free), (store, lib.mcds_store_free)]:
    free(handle)
print("python: %d checks passed" % checks)
sys.exit(0)
