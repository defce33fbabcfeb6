<?php

/**
 * The signatures of the mcds PHP extension: the source of mcds_arginfo.h
 * (regenerate with ./gen-arginfo.sh after any change here) and the file an
 * IDE reads for completion. Every C function in include/mcds.h is reached
 * from one of these methods (but mcds_int_list_len and _get:
 * IntArray::members() reads the list at once, with mcds_int_list_data).
 *
 * @generate-class-entries
 */

namespace Mcds {

    /** The libmcds version the extension is linked with, e.g. "0.1.0". */
    function version(): string {}

    /**
     * A store: real memcached (one server or several, sharded by key) or
     * the embedded in-process store with the same semantics. Structures
     * made from it keep a reference to it, so it lives as long as they do.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Store
    {
        private function __construct() {}

        /**
         * Memcached at "host:port[,host:port...]". Connections are made on
         * first use: a server that is down shows up as an exception of the
         * first call that needs it.
         *
         * $connectTimeout: how long dialing a server may take, in seconds
         * (default 1.0); $ioTimeout: how long one request and its reply may
         * take (default 1.0). Both more than 0 and at most 3600 (an hour),
         * rounded up to whole milliseconds; else a ValueError.
         * $itemSizeLimit: the servers' -I in bytes (default 1 MiB, 1024 to
         * 1 GiB): larger values are refused (ValueTooLargeException)
         * before they are sent.
         *
         * $persistentId: keep the store (its connections) in this process
         * across requests under this name, as php-memcached's
         * `new Memcached($persistentId)`: see fromConfig().
         */
        public static function memcached(string $servers, ?float $connectTimeout = null, ?float $ioTimeout = null, ?int $itemSizeLimit = null, ?string $persistentId = null): Store {}

        /**
         * The embedded in-process store: memcached semantics, no server.
         *
         * $memoryLimit: its budget in bytes, counting each item as key,
         * value and 59 bytes (default 64 MiB; 1024 to 1 TiB), taken as
         * items are written. $evict: when the budget is full, evict the
         * least recently used items (true, the default, as memcached) or
         * refuse writes with OutOfMemoryException (false, as memcached -M).
         * $itemSizeLimit: the largest item in bytes (default 1 MiB; 1024 to
         * 1 GiB). Out of range: a ValueError.
         *
         * $persistentId: keep the store (its items) in this process across
         * requests under this name: one embedded store per php-fpm worker,
         * see fromConfig().
         */
        public static function memory(?int $memoryLimit = null, ?bool $evict = null, ?int $itemSizeLimit = null, ?string $persistentId = null): Store {}

        /**
         * The store a URL names, options and all: the same string the mcds
         * command takes in MCDS_SERVERS. "memcached://host:port[,...]?options"
         * (or just the server list) or "memory://?options". Options:
         * ketama (place keys as php-memcached does with
         * Memcached::OPT_LIBKETAMA_COMPATIBLE, to share a pool's keys with
         * it), distribution=rendezvous|ketama, timeout_ms,
         * connect_timeout_ms, io_timeout_ms, item_size_limit (bytes, or
         * with k/m), memory_limit, evict=true|false, prefix. For example
         * "memcached://10.0.0.1:11211,10.0.0.2:11211?ketama&timeout_ms=500&prefix=app:".
         * "text://host:port?proxy" speaks the classic text protocol, here
         * through twemproxy (no CAS there: locks are refused). A mistake
         * in the URL is an InvalidArgumentException naming it. TLS
         * ("memcached+tls://host:port?ca_file=..."), unix sockets
         * ("unix:/path") and memcached's ASCII auth ("user:password@", or
         * MCDS_USERNAME/MCDS_PASSWORD) are taken too; credentials are never
         * repeated in a message.
         *
         * $persistentId: keep the store in this process across requests
         * under this name: see fromConfig().
         */
        public static function fromUrl(string $url, ?string $persistentId = null): Store {}

        /**
         * The store php.ini configures: mcds.servers, a server list
         * ("host:port[,host:port...]") or a store URL as fromUrl() takes
         * ("memory://" for the embedded store), with mcds.connect_timeout
         * and mcds.io_timeout (seconds; empty: 1.0) and mcds.prefix
         * (empty: none) as its options. When mcds.servers is empty, the
         * environment's MCDS_SERVERS (as the mcds command reads it) is
         * taken instead; when both are empty, an InvalidArgumentException
         * says so: never the embedded store unasked (php-fpm clears the
         * environment of its workers by default, clear_env = yes, so
         * under php-fpm set mcds.servers in php.ini or in the pool's
         * php_admin_value[mcds.servers]). A setting out of range is an
         * InvalidArgumentException naming it.
         *
         * $persistentId (null: none): keep the store in this process
         * across requests under this name, as php-memcached's
         * `new Memcached($persistentId)`: under php-fpm each worker then
         * opens its connections once (at most 2 per server) and reuses
         * them for every later request, instead of once per request. The
         * store is made on first use in each process (never in php-fpm's
         * master) and lives until the process ends. A later call with the
         * same id returns a Store on the same connections when it is the
         * same factory with the same arguments (here: the same settings);
         * with any other, an InvalidArgumentException (never a store for
         * other servers). An id is 1 to 255 bytes, else a ValueError.
         */
        public static function fromConfig(?string $persistentId = null): Store {}

        /**
         * Whether this store was made with a $persistentId (or derived
         * from one such by withPrefix()): its connections outlive the
         * request.
         */
        public function isPersistent(): bool {}

        /**
         * A store on the same connections (or the same embedded memory)
         * whose structures keep their items under keys starting with
         * $prefix: "app/" makes the lock "job" the key "app/lock:job:owner".
         * It replaces this store's prefix ("" gives none); this store is
         * unchanged. The prefix must be key bytes (no spaces or control
         * bytes), under 250 bytes: else InvalidKeyException.
         */
        public function withPrefix(string $prefix): Store {}

        /**
         * Update $key (this store's prefix in front, as it is: a raw key,
         * not a structure name) with a CAS read-modify-write: read it, call
         * $fn with the current value (a string, or null when the key is
         * missing) for the new one, and write it only if nobody changed the
         * item since the read; when someone did, read again and call $fn
         * again, up to $maxAttempts reads (0: 64), then ConflictException.
         * $fn returns a string, or null to leave the item as it is; it may
         * run several times and must have no other effects. If it throws,
         * nothing is written and its exception reaches the caller as
         * thrown. $ttl: seconds the written item lasts (0: no expiry).
         * Returns whether a value was written. A store without CAS
         * (memcached -C, or the text protocol through a proxy) throws
         * UnsupportedException before $fn runs.
         */
        public function update(string $key, callable $fn, int $ttl = 0, int $maxAttempts = 0): bool {}

        /**
         * Plain key/value on this store (get, set, add, delete, incr), as
         * php-memcached has it: see KeyValue. ($store->set() is the set
         * structure.)
         */
        public function kv(): KeyValue {}

        public function counter(string $name): Counter {}

        /** The counter map $name counting units of 10^-$scale (0 to 18 places). */
        public function counterMap(string $name, int $scale = 0): CounterMap {}

        /** A lock: see Lock::__construct for the options. */
        public function lock(string $name, float $ttl = 30.0, bool $fencing = false, ?string $ownerLabel = null, ?float $backoffMin = null, ?float $backoffMax = null): Lock {}

        public function shadowCounter(string $name, int $periodSeconds): ShadowCounter {}

        /** A view counter: see ViewCounter::__construct. */
        public function viewCounter(string $name, callable $loader, int $ttl = 0): ViewCounter {}

        public function set(string $name): Set {}

        public function shardedSet(string $name, int $shards): ShardedSet {}

        public function intArray(string $name): IntArray {}

        public function windowCounter(string $name, int $slotSeconds, int $slots): WindowCounter {}

        public function rateLimiter(string $name, int $limit, int $windowSeconds, bool $sliding = false): RateLimiter {}

        public function eventLog(string $name, int $chunkSeconds, int $chunks): EventLog {}

        public function table(string $name): Table {}

        public function hyperLogLog(string $name): HyperLogLog {}

        public function bloomFilter(string $name, int $expectedItems, float $falsePositiveRate): BloomFilter {}

        public function activityBitmap(string $name, int $startUnixSeconds, int $unitMilliseconds): ActivityBitmap {}

        /** A time series: see TimeSeries::__construct. */
        public function timeSeries(string $name, array $resolutions): TimeSeries {}

        /** A packed series: see PackedSeries::__construct. */
        public function packedSeries(string $name, int $slotMs, int $slotsPerPeriod, int $width, int $retentionMs): PackedSeries {}

        public function leaderboard(string $name, int $capacity): Leaderboard {}

        public function scalableBloomFilter(string $name, int $initialCapacity, float $errorRate): ScalableBloomFilter {}
    }

    /**
     * An exact shared counter (memcached incr/decr: one round trip, atomic).
     *
     * @strict-properties
     * @not-serializable
     */
    final class Counter
    {
        public function __construct(Store $store, string $name) {}

        /**
         * The counter kept under exactly the memcached key $key, for a
         * counter another application already uses: PHP code calling
         * Memcached::increment('hits'), say. No naming is added, and no
         * prefix: the prefix of a store from withPrefix() is NOT applied,
         * so every store made from one connection reaches the same key (a
         * prefix the other application uses, such as php-memcached's
         * OPT_PREFIX_KEY, belongs in $key itself). memcached keeps counters
         * as decimal text whoever writes them, so increments from both
         * sides add up and get() reads the other side's value (an item that
         * is not a decimal number: CorruptException from get(),
         * NonNumericException from incr() and decr()). On several servers,
         * both sides must place the key on the same server (one server, or
         * the same distribution, such as ketama).
         *
         * $key: 1 to 250 bytes, none of them a space, a control byte or DEL
         * (UTF-8 is fine); else InvalidKeyException. The object works as one
         * from new (withTtl(), reset(), incrMany() with the store's other
         * counters).
         */
        public static function withKey(Store $store, string $key): Counter {}

        /**
         * Add $delta; returns the new value. memcached counters are 64-bit
         * unsigned: a value past PHP_INT_MAX comes back as its numeric
         * string ("9223372036854775808"), never as an exception after the
         * increment was applied.
         */
        public function incr(int $delta = 1): int|string {}

        /** Subtract $delta, stopping at 0; returns the new value (as incr()). */
        public function decr(int $delta = 1): int|string {}

        /** The current value (0 if the counter does not exist; as incr()). */
        public function get(): int|string {}

        /**
         * Delete the counter: it reads 0 again, and the next incr() creates
         * it anew. One round trip; resetting a missing counter is no error.
         */
        public function reset(): void {}

        /**
         * Add each delta to its counter in one pipelined batch: one round
         * trip per server, however many counters. $increments is a list of
         * [Counter $counter, int $delta] pairs (a counter may appear more
         * than once: its increments apply in order; the keys do not
         * matter); returns the new values, in the same order. At most
         * 100 000 increments; every counter must come from one store (or
         * stores made from it by withPrefix()): else
         * InvalidArgumentException, and nothing is sent.
         *
         * The increments are independent: one failing (a counter holding a
         * value that is not a number, a server down) does not undo or stop
         * the others. If any failed, every increment has been sent and the
         * others applied, and this throws the exception of the first that
         * failed (its message starting "increments[i]: ", i its position in
         * $increments from 0); the new values of the others are not
         * returned. A new value past PHP_INT_MAX is its numeric string, as
         * incr() returns it.
         *
         * A pair that is not [Counter, int] is a TypeError, a negative delta
         * a ValueError (the delta converted as an int parameter would be,
         * in the caller's strict_types mode).
         *
         * @param array[] $increments list<array{0: Counter, 1: int}>
         * @return list<int|string>
         */
        public static function incrMany(array $increments): array {}

        /**
         * A new object on the same counter whose increments give its item a
         * TTL of $seconds when they create it (an increment of an existing
         * counter leaves its expiry alone; after reset() or expiry the next
         * increment creates it again).
         *
         * 0 means never expires (as memcached's exptime 0, and as new).
         * $seconds always counts from the write, 30 days and more too
         * (memcached would read those as a Unix time: libmcds converts),
         * capped at January 2038. memcached's clock ticks in whole seconds:
         * an item lives between $seconds - 1 and $seconds + 1 seconds.
         * This object is unchanged. $seconds: 0 to 4294967295, else a
         * ValueError.
         */
        public function withTtl(int $seconds): Counter {}
    }

    /**
     * Counts events in the previous period of $periodSeconds: two keys
     * swapping roles, one counted into, one shown. Periods are aligned to
     * Unix time, so every client must use the same period.
     *
     * @strict-properties
     * @not-serializable
     */
    final class ShadowCounter
    {
        /** $periodSeconds: at least 1. */
        public function __construct(Store $store, string $name, int $periodSeconds) {}

        /** Count $delta events in the current period; returns its count so far (past PHP_INT_MAX, its numeric string). */
        public function incr(int $delta = 1): int|string {}

        /** The events of the previous (complete) period: constant for a whole period (as incr()). */
        public function value(): int|string {}
    }

    /**
     * A view counter whose true total lives elsewhere (a database), cached
     * for real-time display.
     *
     * @strict-properties
     * @not-serializable
     */
    final class ViewCounter
    {
        /**
         * $loader: called with no arguments on a cache miss, in this
         * process, while view() or get() runs (at most once per call, never
         * on a hit), for the stored total: it returns an int >= 0 (or a
         * string of one, as PDOStatement::fetchColumn() gives, or null for
         * 0). If it throws, its exception reaches the caller of view() or
         * get() as it was thrown, and nothing is counted or cached.
         * $ttl: seconds the cached total lasts before it is loaded again;
         * 0 (the default), as in memcached, never expires.
         */
        public function __construct(Store $store, string $name, callable $loader, int $ttl = 0) {}

        /**
         * Count $delta views; returns the new total. One round trip on a
         * hit; on a miss the cache is seeded with the loader's total plus
         * $delta by an atomic increment-or-create, so two first views at
         * once are both counted.
         */
        public function view(int $delta = 1): int|string {}

        /** The current total: the cached one, or on a miss the loader's (which then seeds the cache); past PHP_INT_MAX, its numeric string. */
        public function get(): int|string {}

        /** Drop the cached total: the next view() or get() calls the loader. */
        public function invalidate(): void {}
    }

    /**
     * A distributed lock. One object holds at most one lease at a time.
     * The calls Symfony Lock users know (acquire, refresh, isAcquired,
     * release) and synchronized() for the common case.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Lock
    {
        /**
         * $ttl: the lease in seconds, a whole number (libmcds leases are
         * whole seconds), at least 1.
         * $fencing: every acquire also takes a fencing token
         * (getFencingToken()), strictly increasing per lock name.
         * $ownerLabel: names the holder in its owner token ("<label>
         * <random hex>", what getHolder() shows): at most 200 bytes of
         * printable ASCII, e.g. "host=web1 pid=4242".
         * $backoffMin, $backoffMax: a blocking acquire waits between tries
         * a random time under a ceiling that starts at $backoffMin seconds
         * and doubles up to $backoffMax (defaults 0.001 and 0.05; at most
         * 60).
         */
        public function __construct(Store $store, string $name, float $ttl = 30.0, bool $fencing = false, ?string $ownerLabel = null, ?float $backoffMin = null, ?float $backoffMax = null) {}

        /**
         * The lock kept under exactly the memcached key $key, for a lock
         * other applications take with memcached's add: Symfony Lock's
         * MemcachedStore, or code that locks with $memcached->add($key,
         * $token, $ttl) and unlocks by deleting the key. No naming is
         * added, and no prefix: the prefix of a store from withPrefix() is
         * NOT applied (a prefix the other application uses, such as
         * php-memcached's OPT_PREFIX_KEY, belongs in $key itself).
         *
         * Both sides exclude each other: whoever added the key first holds
         * it until it is deleted or expires, and getHolder() shows the
         * other side's value meanwhile. This object releases and refreshes
         * only its own lease (by CAS); the other side must likewise never
         * delete a key it did not add. With $fencing, the tokens count in
         * "$key:fence". On several servers, both sides must place the key
         * on the same server (one server, or the same distribution, such
         * as ketama).
         *
         * $key: 1 to 244 bytes (room for ":fence"), none of them a space, a
         * control byte or DEL; else InvalidKeyException. The other
         * parameters are those of __construct; getName() returns $key.
         */
        public static function withKey(Store $store, string $key, float $ttl = 30.0, bool $fencing = false, ?string $ownerLabel = null, ?float $backoffMin = null, ?float $backoffMax = null): Lock {}

        /**
         * Take the lock. Non-blocking: true if this object now holds it,
         * false if another owner does. Blocking: wait until it is free
         * (always true). True at once if this object already holds it.
         */
        public function acquire(bool $blocking = false): bool {}

        /** Wait up to $timeout seconds: true if acquired, false if it stayed taken. */
        public function acquireWithin(float $timeout): bool {}

        /**
         * Renew the lease for $ttl seconds from now (default: the lock's
         * TTL; a whole number, at least 1), if it is still ours. One round
         * trip. Throws LockLostException if it had been lost (expired,
         * evicted or taken by another owner, who keeps it; isLost() is then
         * true), and InvalidArgumentException if this object holds no lease.
         */
        public function refresh(?float $ttl = null): void {}

        /**
         * Renew the lease in the background every $ttl / 3 seconds, for
         * $ttl each time (default: the lock's TTL), until it is released or
         * found lost. Poll isLost() from the work loop: it turns true when a
         * renewal finds the lease gone, or renewals keep failing and the
         * next would come after the lease ends. InvalidArgumentException if
         * this object holds no lease.
         */
        public function autoExtend(?float $ttl = null): void {}

        /**
         * Whether the lease this object holds is known to be lost: found so
         * by refresh(), the background renewal or a release. No round trip.
         * False when this object holds no lease.
         */
        public function isLost(): bool {}

        /**
         * Whether this object holds the lock, asking the server: it holds a
         * lease not known to be lost, and the lock's holder is this
         * object's owner token. One round trip (none when it holds
         * nothing); a BackendException when the server cannot say.
         */
        public function isAcquired(): bool {}

        /**
         * The fencing token of the lease this object holds: pass it to the
         * resource the lock protects, which refuses writes carrying an older
         * token than one it has seen. InvalidArgumentException if it holds
         * no lease or the lock was made without $fencing. A token past
         * PHP_INT_MAX is its numeric string (compare such tokens as digit
         * strings, the longer the larger, or with bccomp()).
         */
        public function getFencingToken(): int|string {}

        /**
         * Who holds the lock now, whichever object or process it is: the
         * holder's owner token, or null if the lock is free. One round trip.
         */
        public function getHolder(): ?string {}

        /** The owner token of the lease this object holds (what getHolder() shows while it holds it), or null. */
        public function getOwnerToken(): ?string {}

        /**
         * Release the lease: true if it was still ours, false if it had
         * been lost (expired and maybe taken by another owner, who keeps
         * it) or if this object held nothing. On a server error it throws
         * and this object still holds the lease: call release() again.
         */
        public function release(): bool {}

        /**
         * Run $callback while holding the lock and return its result,
         * releasing the lock afterwards, also when it throws. Waits until
         * the lock is free, or at most $timeout seconds
         * (WaitTimeoutException). Throws LockLostException after the
         * callback if the lease expired while it ran (another owner may
         * have overlapped it): give the lock a longer TTL, or call
         * autoExtend() in the callback.
         */
        public function synchronized(callable $callback, ?float $timeout = null): mixed {}

        public function getName(): string {}

        /** The lease in seconds. */
        public function getTtl(): float {}
    }

    /**
     * A set of byte strings, in insertion order.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Set
    {
        public function __construct(Store $store, string $name) {}

        public function add(string $member): void {}

        public function remove(string $member): void {}

        /**
         * Add every member of $members (strings) in one append: one round
         * trip, whatever the count (at most 1 000 000).
         *
         * @param string[] $members
         */
        public function addMany(array $members): void {}

        /**
         * Remove every member of $members in one append.
         *
         * @param string[] $members
         */
        public function removeMany(array $members): void {}

        public function contains(string $member): bool {}

        /** @return list<string> */
        public function members(): array {}

        /**
         * Rewrite the set without the tokens of removed members, by CAS:
         * true if it was rewritten, false if there was nothing to do or a
         * concurrent write won (nothing is lost either way).
         */
        public function compact(): bool {}

        /** Delete the set (every member). */
        public function clear(): void {}

        /**
         * A new object on the same set whose writes give its item a TTL of
         * $seconds when they create it, and again when compact() rewrites
         * it (an add to an existing set leaves its expiry alone).
         *
         * 0 means never expires (as memcached's exptime 0, and as new).
         * $seconds always counts from the write, 30 days and more too
         * (memcached would read those as a Unix time: libmcds converts),
         * capped at January 2038. memcached's clock ticks in whole seconds:
         * an item lives between $seconds - 1 and $seconds + 1 seconds.
         * This object is unchanged. $seconds: 0 to 4294967295, else a
         * ValueError.
         */
        public function withTtl(int $seconds): Set {}
    }

    /**
     * A set spread over $shards items by a stable hash of the member, for
     * sets too large or too busy for one item. Every client must use the
     * same number of shards.
     *
     * @strict-properties
     * @not-serializable
     */
    final class ShardedSet
    {
        /** $shards: 1 to 4096. */
        public function __construct(Store $store, string $name, int $shards) {}

        public function add(string $member): void {}

        public function remove(string $member): void {}

        /**
         * Add every member of $members: one append per shard touched, one
         * round trip per server (at most 1 000 000 members).
         *
         * @param string[] $members
         */
        public function addMany(array $members): void {}

        /** @param string[] $members */
        public function removeMany(array $members): void {}

        /** Whether the set contains $member (reads one shard). */
        public function contains(string $member): bool {}

        /** @return list<string> every member, shard by shard (each in first-insertion order) */
        public function members(): array {}

        /** Compact every shard holding tokens of removed members (by CAS: no write is lost). */
        public function compact(): void {}

        /** Delete every shard. */
        public function clear(): void {}
    }

    /**
     * A set of 64-bit integers (stored as decimal members of a set).
     *
     * @strict-properties
     * @not-serializable
     */
    final class IntArray
    {
        public function __construct(Store $store, string $name) {}

        /** Add the values in one append (none: nothing to do; at most 1 000 000). */
        public function add(int ...$values): void {}

        /** Remove the values in one append. */
        public function remove(int ...$values): void {}

        public function contains(int $value): bool {}

        /** @return list<int> the values in first-insertion order */
        public function members(): array {}

        /** Delete the array (every value). */
        public function clear(): void {}
    }

    /**
     * Named fields, each an atomic signed counter, listed and read all at
     * once: Redis' HINCRBY, HINCRBYFLOAT (without float drift), HGET,
     * HGETALL, HKEYS, HDEL and HLEN. A field is 1 to 1024 bytes of UTF-8
     * (else InvalidArgumentException, or InvalidKeyException for bytes that
     * are not UTF-8) and holds -2^61 to 2^61 - 1 units: decrements stop at
     * the bottom, an increment past the top is refused
     * (InvalidArgumentException), and one call adds at most 2^56 - 1 units
     * either way. With $scale decimal places a unit is 10^-$scale, and the
     * *Decimal methods take and give decimal strings exactly ("0.1" added
     * 1000 times is "100.0"; more places than the scale is an
     * InvalidArgumentException, never rounded). Every client of a map must
     * use the same scale.
     *
     * @strict-properties
     * @not-serializable
     */
    final class CounterMap
    {
        /** $scale: 0 to 18 decimal places. */
        public function __construct(Store $store, string $name, int $scale = 0) {}

        /** A new object on the same map counting units of 10^-$places (0 to 18). */
        public function withScale(int $places): CounterMap {}

        public function name(): string {}

        /** The decimal places. */
        public function scale(): int {}

        /** The memcached key of the field registry (with the store's prefix). */
        public function registryKey(): string {}

        /** The memcached key of $field's counter. No round trip. */
        public function fieldKey(string $field): string {}

        /**
         * Add $by units (negative to subtract) to $field, creating it at $by
         * if it does not exist; the new value. One round trip (two on the
         * field's first touch), atomic across every client.
         */
        public function incr(string $field, int $by = 1): int {}

        /**
         * Add the exact decimal $amount ("0.1", "-3": [+-]digits[.digits])
         * at the map's scale; the new value with exactly scale places.
         */
        public function incrDecimal(string $field, string $amount): string {}

        /**
         * Add the float $amount, taken as its shortest decimal form (0.1)
         * rounded half away from zero to the scale; the new value.
         */
        public function incrF64(string $field, float $amount): string {}

        /** $field's value in units, 0 if it does not exist. */
        public function get(string $field): int {}

        /** get() as a decimal string with exactly scale places. */
        public function getDecimal(string $field): string {}

        /**
         * Every field with its value in units, field => value, in
         * first-registration order (a field whose counter is gone is left
         * out). As in any PHP array, a field such as "42" becomes the int
         * key 42. Two round trips, not a snapshot.
         *
         * @return array<string, int>
         */
        public function getAll(): array {}

        /**
         * getAll() with decimal strings.
         *
         * @return array<string, string>
         */
        public function getAllDecimal(): array {}

        /** @return list<string> the registered fields in first-registration order */
        public function fields(): array {}

        /** How many fields are registered. */
        public function len(): int {}

        public function isEmpty(): bool {}

        /** Unregister $field and delete its counter; whether its counter existed. */
        public function remove(string $field): bool {}
    }

    /**
     * A sliding-window counter: events in the last $slots - 1 complete
     * slots of $slotSeconds each.
     *
     * @strict-properties
     * @not-serializable
     */
    final class WindowCounter
    {
        /** $slots: 2 to 1000. */
        public function __construct(Store $store, string $name, int $slotSeconds, int $slots) {}

        /** Count $delta events now; returns the current slot's count (past PHP_INT_MAX, its numeric string). */
        public function incr(int $delta = 1): int|string {}

        /** The events of the last $slots - 1 complete slots (as incr()). */
        public function value(): int|string {}
    }

    /**
     * The answer of a rate limiter.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Decision
    {
        /** Whether the request is allowed. */
        public readonly bool $allowed;
        /** How many more requests would be allowed now. */
        public readonly int $remaining;
        /** When denied, milliseconds until a request would be allowed (else 0). */
        public readonly int $retryAfterMs;

        private function __construct() {}
    }

    /**
     * A rate limiter: at most $limit requests per window, fixed or
     * (with $sliding) the sliding-window estimate.
     *
     * @strict-properties
     * @not-serializable
     */
    final class RateLimiter
    {
        public function __construct(Store $store, string $name, int $limit, int $windowSeconds, bool $sliding = false) {}

        /** Count this request and decide. */
        public function check(): Decision {}

        /** Decide without counting a request. */
        public function peek(): Decision {}
    }

    /**
     * An event log: a ring of $chunks time chunks of $chunkSeconds each; it
     * keeps ($chunks - 1) * $chunkSeconds seconds of events.
     *
     * @strict-properties
     * @not-serializable
     */
    final class EventLog
    {
        /** $chunks: 2 to 10000. */
        public function __construct(Store $store, string $name, int $chunkSeconds, int $chunks) {}

        /** Record an event now; returns its timestamp in Unix milliseconds. */
        public function put(string $payload): int {}

        /**
         * Record an event at $atMs (Unix milliseconds): a late event, or one
         * imported from elsewhere. $atMs must lie in the current chunk or
         * the log's capacity before it: else InvalidArgumentException.
         */
        public function putAt(int $atMs, string $payload): void {}

        /**
         * The events with $firstMs <= at <= $lastMs still kept, in time order.
         *
         * @return list<array{at_ms: int, payload: string}>
         */
        public function fetch(int $firstMs, int $lastMs): array {}

        /**
         * The events after $cursor (default: the start, every event still
         * kept), up to now in time order, and the cursor to poll with next
         * ($cursor's position when nothing is new):
         * `[$events, $cursor] = $log->since($cursor);`. Events that arrive
         * later with a timestamp before the cursor are not seen.
         *
         * @return array{0: list<array{at_ms: int, payload: string}>, 1: Cursor}
         */
        public function since(?Cursor $cursor = null): array {}
    }

    /**
     * A polling position in an event log (EventLog::since): the timestamp
     * of the last event seen and how many events with exactly that
     * timestamp were seen. A plain value: keep it, serialize it, pass it
     * back.
     *
     * @strict-properties
     */
    final class Cursor
    {
        /** Unix milliseconds of the last event seen. */
        public readonly int $atMs;
        /** How many events at $atMs were seen. */
        public readonly int $seenAtMs;

        /** new Cursor() is the start: every event still in the log. */
        public function __construct(int $atMs = 0, int $seenAtMs = 0) {}

        /** The position after every event up to and including Unix ms $atMs. */
        public static function after(int $atMs): Cursor {}
    }

    /**
     * Plain key/value on a store, as php-memcached has it: memcached's own
     * get, set, add, delete and increment on single keys. Each key is raw
     * (not a structure name), with the store's prefix in front, and is
     * refused as every key is (InvalidKeyException: empty, a space or a
     * control byte, over 250 bytes with the prefix) before anything is
     * sent. A TTL is whole seconds, 0 for no expiry.
     *
     * @strict-properties
     * @not-serializable
     */
    final class KeyValue
    {
        public function __construct(Store $store) {}

        /** $key's value, or null if absent. One round trip. */
        public function get(string $key): ?string {}

        /**
         * Store $value under $key. One round trip; an exception means it
         * was not stored, or AmbiguousException that it may have been.
         */
        public function set(string $key, string $value, int $ttl = 0): void {}

        /** Store $value under $key only if $key is absent; returns whether it was stored. */
        public function add(string $key, string $value, int $ttl = 0): bool {}

        /** Delete $key; returns whether it existed. */
        public function delete(string $key): bool {}

        /**
         * Add $delta to the counter under $key: the new value, or null if
         * $key is absent (memcached's incr creates nothing; $ttl is then
         * unused). With $initial, an absent counter is created atomically
         * with the value $initial (not $initial + $delta, as
         * Memcached::increment with an initial value) and $ttl. Past
         * PHP_INT_MAX the value is its numeric string. NonNumericException
         * if the value is not a decimal number.
         */
        public function incr(string $key, int $delta = 1, ?int $initial = null, int $ttl = 0): int|string|null {}
    }

    /**
     * A table: members with values, O(1) membership through a key per member.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Table
    {
        public function __construct(Store $store, string $name) {}

        /** Set $member's value, adding the member if new. */
        public function set(string $member, string $value): void {}

        public function has(string $member): bool {}

        /** $member's value, or null if absent. */
        public function get(string $member): ?string {}

        /** Remove $member; returns whether it was present. */
        public function delete(string $member): bool {}

        /** @return list<string> the members in insertion order */
        public function keys(): array {}

        /**
         * Every member with its value, member => value, in insertion order
         * (a member whose value is gone, evicted or expired, is left out).
         * As in any PHP array, a member such as "42" becomes the int key 42.
         *
         * @return array<string, string>
         */
        public function entries(): array {}
    }

    /**
     * A HyperLogLog: distinct counting in 12 KiB (PFADD, PFCOUNT, PFMERGE).
     *
     * @strict-properties
     * @not-serializable
     */
    final class HyperLogLog
    {
        public function __construct(Store $store, string $name) {}

        /** PFADD; returns whether the estimate may have changed. */
        public function add(string $element): bool {}

        /** PFCOUNT: the estimated number of distinct elements. */
        public function count(): int {}

        /** PFMERGE: write the union of this sketch and $sources into this one. */
        public function merge(HyperLogLog ...$sources): void {}

        /**
         * PFCOUNT of several keys: the estimated number of distinct
         * elements in the union of this sketch and $others, writing
         * nothing. All must come from one store (or stores made from it by
         * withPrefix()): else InvalidArgumentException.
         */
        public function countUnion(HyperLogLog ...$others): int {}

        /**
         * PFADD of every element of $elements (strings) in one
         * read-modify-write: two round trips (one when nothing changes),
         * whatever the count (at most 1 000 000). Returns whether the
         * estimate may have changed; false for none.
         *
         * @param string[] $elements
         */
        public function addMany(array $elements): bool {}

        /**
         * Delete the sketch: it counts 0 again. One round trip; clearing a
         * missing sketch is no error.
         */
        public function clear(): void {}

        /**
         * A new object on the same sketch whose writes (add, addMany,
         * merge) give its item a TTL of $seconds, counted again from each
         * write that changes it. It is on the same store as this one, for
         * merge() and countUnion().
         *
         * 0 means never expires (as memcached's exptime 0, and as new).
         * $seconds always counts from the write, 30 days and more too
         * (memcached would read those as a Unix time: libmcds converts),
         * capped at January 2038. memcached's clock ticks in whole seconds:
         * an item lives between $seconds - 1 and $seconds + 1 seconds.
         * This object is unchanged. $seconds: 0 to 4294967295, else a
         * ValueError.
         */
        public function withTtl(int $seconds): HyperLogLog {}
    }

    /**
     * A Bloom filter. Every client must use the same $expectedItems and
     * $falsePositiveRate.
     *
     * @strict-properties
     * @not-serializable
     */
    final class BloomFilter
    {
        /** $falsePositiveRate: between 0 and 1, e.g. 0.01. */
        public function __construct(Store $store, string $name, int $expectedItems, float $falsePositiveRate) {}

        /** Add an element; returns whether it was new (some bit was clear). */
        public function add(string $element): bool {}

        /** Whether the element may have been added (no false negatives). */
        public function contains(string $element): bool {}

        /**
         * Add every element of $elements (strings): one read of the blocks
         * they fall in and one pipelined batch of writes (at most
         * 1 000 000). Returns how many were new: what add() would have said
         * for each in order, summed (an element given twice counts at most
         * once). On an error after the reads some blocks may have been
         * written (a filter only gains bits).
         *
         * @param string[] $elements
         */
        public function addMany(array $elements): int {}

        /**
         * Whether each element of $elements (strings) may have been added,
         * as contains() says: one read of the blocks they fall in.
         *
         * @param string[] $elements
         * @return list<bool> in the order of $elements
         */
        public function containsMany(array $elements): array {}

        /**
         * Delete every block: the filter is empty again. One pipelined
         * batch of deletes; on an error some blocks may be deleted already.
         */
        public function clear(): void {}

        /**
         * A new object on the same filter whose adds give each block they
         * write a TTL of $seconds, counted again from each write of that
         * block.
         *
         * 0 means never expires (as memcached's exptime 0, and as new).
         * $seconds always counts from the write, 30 days and more too
         * (memcached would read those as a Unix time: libmcds converts),
         * capped at January 2038. memcached's clock ticks in whole seconds:
         * an item lives between $seconds - 1 and $seconds + 1 seconds.
         * This object is unchanged. $seconds: 0 to 4294967295, else a
         * ValueError.
         */
        public function withTtl(int $seconds): BloomFilter {}
    }

    /**
     * An activity bitmap: one bit per time unit of $unitMilliseconds, bit 0
     * being the unit that starts at $startUnixSeconds (SETBIT, BITCOUNT).
     *
     * @strict-properties
     * @not-serializable
     */
    final class ActivityBitmap
    {
        public function __construct(Store $store, string $name, int $startUnixSeconds, int $unitMilliseconds) {}

        /** SETBIT $index to 1; returns the previous bit. */
        public function set(int $index): bool {}

        /**
         * Mark the unit containing $atUnixMs (default: now); returns the
         * previous bit. InvalidArgumentException before the bitmap's start.
         */
        public function mark(?int $atUnixMs = null): bool {}

        /** GETBIT $index. */
        public function get(int $index): bool {}

        /** BITCOUNT of bits $first to $last, both included. */
        public function count(int $first, int $last): int {}

        /**
         * A new object on the same bitmap whose writes (set, mark) give
         * each segment they write a TTL of $seconds, counted again from each
         * write of that segment.
         *
         * 0 means never expires (as memcached's exptime 0, and as new).
         * $seconds always counts from the write, 30 days and more too
         * (memcached would read those as a Unix time: libmcds converts),
         * capped at January 2038. memcached's clock ticks in whole seconds:
         * an item lives between $seconds - 1 and $seconds + 1 seconds.
         * This object is unchanged. $seconds: 0 to 4294967295, else a
         * ValueError.
         */
        public function withTtl(int $seconds): ActivityBitmap {}
    }

    /**
     * A time series: the count, exact sum, min and max of integer samples
     * per time bucket, at 1 to 8 resolutions, all written by one record().
     * Times are Unix milliseconds; "now" and retention follow the system
     * clock.
     *
     * A bucket is ['start_ms' => int, 'count' => int, 'sum' => int|string,
     * 'min' => int, 'max' => int]. Sums are exact: an int when they fit
     * one (PHP_INT_MIN to PHP_INT_MAX), else a numeric string of their
     * decimal digits (sums of 64-bit samples pass 2^63), which bcmath or
     * GMP take as it is.
     *
     * Reads skip buckets past retention and cover at most 10000 buckets
     * (else InvalidArgumentException). A read asks each server whether it
     * lost items (a restart, flush or eviction) since the buckets it
     * returns could first be written: a bucket it cannot vouch for is a
     * LostException ("may have lost data") rather than a short or
     * missing answer, including buckets from before a fresh server
     * started (withLossCheck(false) turns the check off). A sample more
     * than the clock skew (60 s, withMaxClockSkew()) ahead of now is an
     * InvalidArgumentException.
     *
     * @strict-properties
     * @not-serializable
     */
    final class TimeSeries
    {
        /**
         * $resolutions: 1 to 8 [stepMs, retentionMs] pairs of distinct
         * steps (whole milliseconds; a retention of at least one step, at
         * most 100 years), e.g. [[1000, 3600000], [60000, 86400000]].
         * Every process must open the series with the same ones. Else an
         * InvalidArgumentException (a ValueError for a negative number, a
         * TypeError for what is not a pair of ints).
         */
        public function __construct(Store $store, string $name, array $resolutions) {}

        /** The series' name. */
        public function name(): string {}

        /**
         * Its resolutions, finest first, as [stepMs, retentionMs] pairs.
         *
         * @return list<array{0: int, 1: int}>
         */
        public function resolutions(): array {}

        /**
         * The same series whose reads ask the store whether it lost items
         * (true, the default) or read what is there (false: a bucket may
         * then read short, or empty, without an error).
         */
        public function withLossCheck(bool $check): TimeSeries {}

        /**
         * The same series allowing clocks $skewMs apart (default 60000):
         * samples at most that far ahead of now, and reads that vouch for
         * buckets starting twice that long after their server's last loss.
         */
        public function withMaxClockSkew(int $skewMs): TimeSeries {}

        /**
         * Record $value at $tsMs (Unix ms) at every resolution whose bucket
         * is still within retention (none: nothing is written, no error).
         * Each bucket is one item, changed by CAS: 2 round trips per server.
         */
        public function record(int $tsMs, int $value): void {}

        /** Record $value now. */
        public function recordNow(int $value): void {}

        /**
         * The non-empty buckets of resolution $stepMs (one of the series'
         * steps) from the one containing $fromMs to the one containing
         * $toMs (inclusive), oldest first. One round trip per server.
         *
         * @return list<array{start_ms: int, count: int, sum: int|string, min: int, max: int}>
         */
        public function range(int $fromMs, int $toMs, int $stepMs): array {}

        /**
         * The aggregates of every sample of the range; null when none.
         *
         * @return array{count: int, sum: int|string, min: int, max: int}|null
         */
        public function aggregate(int $fromMs, int $toMs, int $stepMs): ?array {}

        /** How many samples the range holds. */
        public function count(int $fromMs, int $toMs, int $stepMs): int {}

        /** The exact sum of the range's samples (0 when none): an int, or a numeric string past PHP_INT_MAX. */
        public function sum(int $fromMs, int $toMs, int $stepMs): int|string {}

        /** The mean of the range's samples; null when none. */
        public function avg(int $fromMs, int $toMs, int $stepMs): ?float {}

        /** The smallest sample of the range; null when none. */
        public function min(int $fromMs, int $toMs, int $stepMs): ?int {}

        /** The largest sample of the range; null when none. */
        public function max(int $fromMs, int $toMs, int $stepMs): ?int {}

        /**
         * The buckets where any of $series (TimeSeries objects) has
         * samples, each the merge of their samples there (counts and sums
         * add, min and max widen). All must come from one store (or stores
         * made from it by withPrefix) and record at $stepMs: else
         * InvalidArgumentException. One round trip per server.
         *
         * @param TimeSeries[] $series
         * @return list<array{start_ms: int, count: int, sum: int|string, min: int, max: int}>
         */
        public static function union(array $series, int $fromMs, int $toMs, int $stepMs): array {}

        /**
         * The buckets where every one of $series has samples, each the
         * merge of their samples there (as union; no series: no bucket).
         *
         * @param TimeSeries[] $series
         * @return list<array{start_ms: int, count: int, sum: int|string, min: int, max: int}>
         */
        public static function intersection(array $series, int $fromMs, int $toMs, int $stepMs): array {}
    }

    /**
     * A packed series: a saturating counter per time slot of $slotMs,
     * $slotsPerPeriod slots of $width bytes packed into one item per
     * period (Redis's BITFIELD pattern), for counters dense in time.
     *
     * @strict-properties
     * @not-serializable
     */
    final class PackedSeries
    {
        /**
         * $slotMs: whole milliseconds (at least 1); $slotsPerPeriod: 1 to
         * 65536; $width: 1, 2 or 4 bytes (counts saturate at 255, 65535 or
         * 4294967295); $retentionMs: at least one period, at most 100
         * years. Else an InvalidArgumentException (a ValueError for a
         * negative number); ValueTooLargeException if a period's item
         * would not fit the store's item size limit.
         */
        public function __construct(Store $store, string $name, int $slotMs, int $slotsPerPeriod, int $width, int $retentionMs) {}

        /**
         * Add $delta (0 to 4294967295) to the slot containing $tsMs (Unix
         * ms), saturating at the width's maximum; returns the slot's new
         * value. 2 round trips (1 when the slot does not change). A slot
         * past retention: InvalidArgumentException.
         */
        public function incr(int $tsMs, int $delta = 1): int {}

        /** incr() the slot of now. */
        public function incrNow(int $delta = 1): int {}

        /** The count of the slot containing $tsMs (0 past retention). */
        public function get(int $tsMs): int {}

        /**
         * The same series whose reads ask the store whether it lost items
         * (true, the default) or not, as TimeSeries::withLossCheck().
         */
        public function withLossCheck(bool $check): PackedSeries {}

        /**
         * The same series allowing clocks $skewMs apart, as
         * TimeSeries::withMaxClockSkew().
         */
        public function withMaxClockSkew(int $skewMs): PackedSeries {}

        /**
         * Every slot from the one containing $fromMs to the one containing
         * $toMs (inclusive) within retention, oldest first, zeros
         * included; at most 100000. One round trip per server, and two
         * more per server for the loss check.
         *
         * @return list<array{start_ms: int, value: int}>
         */
        public function range(int $fromMs, int $toMs): array {}

        /** The sum of the slots of the range. */
        public function sum(int $fromMs, int $toMs): int {}
    }

    /**
     * Counts per member, largest first (Redis's ZINCRBY and ZREVRANGE …
     * WITHSCORES): exact while at most $capacity distinct members were
     * counted, a Space-Saving sketch of $capacity counters past that, where
     * each count overestimates by at most its 'error' (at most
     * total / capacity) and every member counted more than
     * total / capacity times is on the board. Members are at most 128
     * bytes. Every client must use the same $capacity.
     *
     * @strict-properties
     * @not-serializable
     */
    final class Leaderboard
    {
        /**
         * $capacity: 1 to 1 048 576 (2^20), else an
         * InvalidArgumentException. A board of more than 200 members is
         * kept in shards of 200: an increment moves one shard.
         */
        public function __construct(Store $store, string $name, int $capacity) {}

        /** The memcached key the board lives under (the store's prefix included). */
        public function key(): string {}

        /** How many members the board keeps exactly, and counters once sketched. */
        public function capacity(): int {}

        /**
         * ZINCRBY: add $by (at least 1) to $member's count; returns its new
         * count (an upper bound once the board is sketched). Two round
         * trips. A $by of 0, a member over 128 bytes or a total past
         * 2^64 - 1 is an InvalidArgumentException, and nothing is counted.
         * A count past PHP_INT_MAX comes back as the numeric string of its
         * digits (bcmath or GMP take it as it is), here and in summary(),
         * top() and score(): counted is counted, never an exception.
         */
        public function incr(string $member, int $by = 1): int|string {}

        /**
         * Apply every increment of $increments (member => by), in order,
         * in one update (two round trips). A bad increment is an
         * InvalidArgumentException, and nothing is counted.
         *
         * @param int[] $increments by, keyed by member
         */
        public function incrMany(array $increments): void {}

        /**
         * The whole board, one round trip: its capacity, the total of every
         * increment, whether every count is exact, the most a count may
         * overestimate (and a member off the board have been counted), and
         * how many members it holds.
         *
         * @return array{capacity: int, total: int|string, exact: bool, maxError: int|string, members: int}
         */
        public function summary(): array {}

        /**
         * ZREVRANGE 0 $k-1 WITHSCORES: the $k members with the largest
         * counts, largest first (ties by member bytes), each with its count
         * and how much that may overestimate its true count. One round trip.
         *
         * @return list<array{member: string, count: int|string, error: int|string}>
         */
        public function top(int $k): array {}

        /**
         * ZSCORE: $member's entry, or null if it is not on the board (its
         * true count is then at most summary()['maxError']). One round trip.
         *
         * @return array{member: string, count: int|string, error: int|string}|null
         */
        public function score(string $member): ?array {}

        /** Delete the board: it is empty again. */
        public function clear(): void {}

        /**
         * A new object on the same board whose increments give its item a
         * TTL of $seconds, counted again from each increment.
         *
         * 0 means never expires (as memcached's exptime 0, and as new).
         * $seconds always counts from the write, 30 days and more too
         * (memcached would read those as a Unix time: libmcds converts),
         * capped at January 2038. memcached's clock ticks in whole seconds:
         * an item lives between $seconds - 1 and $seconds + 1 seconds.
         * This object is unchanged. $seconds: 0 to 4294967295, else a
         * ValueError.
         */
        public function withTtl(int $seconds): Leaderboard {}
    }

    /**
     * A Bloom filter that grows by layers (RedisBloom's scalable filter):
     * a first layer for $initialCapacity elements, then layers twice as
     * large (see withGrowth()), for a compound false-positive rate below
     * $errorRate however many elements it takes. Every client must use the
     * same numbers.
     *
     * @strict-properties
     * @not-serializable
     */
    final class ScalableBloomFilter
    {
        /** $errorRate: between 0 and 1, e.g. 0.01. */
        public function __construct(Store $store, string $name, int $initialCapacity, float $errorRate) {}

        /**
         * A new object on the same filter whose layers each hold $growth
         * (1 to 16, else an InvalidArgumentException) times the previous
         * one's capacity (RedisBloom's EXPANSION). Every client must use
         * the same growth. This object is unchanged.
         */
        public function withGrowth(int $growth): ScalableBloomFilter {}

        /** The memcached key of the header item (the layer count; the store's prefix included). */
        public function headerKey(): string {}

        /** Add an element; returns whether it was new (in no layer yet). */
        public function add(string $element): bool {}

        /** Whether the element may have been added (no false negatives). */
        public function contains(string $element): bool {}

        /**
         * Whether each element of $elements (strings) may have been added,
         * as contains() says: one read of the header and the blocks they
         * fall in, in every layer.
         *
         * @param string[] $elements
         * @return list<bool> in the order of $elements
         */
        public function containsMany(array $elements): array {}

        /** How many layers the filter has (1 until it first grows). One round trip. */
        public function layers(): int {}

        /** Delete the header and every layer's items: the filter is empty again. */
        public function clear(): void {}
    }

    /**
     * Every error of libmcds: the message is mcds_last_error_message() of
     * the failing call, the code its mcds_result (the constants below).
     */
    class Exception extends \RuntimeException
    {
        /**
         * @var int
         * @cvalue MCDS_NULL_ARGUMENT
         */
        public const NULL_ARGUMENT = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_INVALID_UTF8
         */
        public const INVALID_UTF8 = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_PANIC
         */
        public const PANIC = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_INTERNAL
         */
        public const INTERNAL = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_CALLBACK_FAILED
         */
        public const CALLBACK_FAILED = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_INVALID_KEY
         */
        public const INVALID_KEY = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_VALUE_TOO_LARGE
         */
        public const VALUE_TOO_LARGE = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_INVALID_ARGUMENT
         */
        public const INVALID_ARGUMENT = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_NON_NUMERIC
         */
        public const NON_NUMERIC = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_CORRUPT
         */
        public const CORRUPT = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_LOST
         */
        public const LOST = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_IO
         */
        public const IO = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_SERVER_DOWN
         */
        public const SERVER_DOWN = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_TIMEOUT
         */
        public const TIMEOUT = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_AMBIGUOUS
         */
        public const AMBIGUOUS = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_OUT_OF_MEMORY
         */
        public const OUT_OF_MEMORY = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_SERVER_ERROR
         */
        public const SERVER_ERROR = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_PROTOCOL
         */
        public const PROTOCOL = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_CONFLICT
         */
        public const CONFLICT = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_UNSUPPORTED
         */
        public const UNSUPPORTED = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_WAIT_TIMEOUT
         */
        public const WAIT_TIMEOUT = UNKNOWN;
        /**
         * @var int
         * @cvalue MCDS_OTHER
         */
        public const OTHER = UNKNOWN;

        /** The name of the code, e.g. "MCDS_INVALID_KEY" (mcds_result_name). */
        public function getResultName(): string {}
    }

    /** A bug in mcds or in this extension (MCDS_PANIC, MCDS_INTERNAL, MCDS_NULL_ARGUMENT): please report it. */
    class InternalException extends Exception {}

    /**
     * A callback given to libmcds failed (MCDS_CALLBACK_FAILED). A
     * ViewCounter loader that throws is not reported so: its own exception
     * reaches the caller as it was thrown.
     */
    class CallbackFailedException extends Exception {}

    /** The key built from a name is empty, too long or has spaces or control bytes; or the name is not UTF-8. */
    class InvalidKeyException extends Exception {}

    /** The value would exceed the item size limit. */
    class ValueTooLargeException extends Exception {}

    /** An argument is out of range or the call does not fit the object's state. */
    class InvalidArgumentException extends Exception {}

    /** incr/decr found a value that is not a number. */
    class NonNumericException extends Exception {}

    /** Stored bytes could not be decoded. */
    class CorruptException extends Exception {}

    /**
     * A read cannot vouch for the data: its server lost items (a restart,
     * a flush, an eviction) since it could have been written. A
     * CorruptException too.
     */
    class LostException extends CorruptException {}

    /** The server failed the request: every MCDS_2xx code. */
    class BackendException extends Exception {}

    /** The server could not be reached; the request was not applied. */
    class IoException extends BackendException {}

    /** The server is marked down after a failed connection; not applied. */
    class ServerDownException extends BackendException {}

    /** The server did not answer in time; the request was not applied. */
    class TimeoutException extends BackendException {}

    /** The request was sent but no reply came: it may have been applied. */
    class AmbiguousException extends BackendException {}

    /** The server is out of memory and does not evict. */
    class OutOfMemoryException extends BackendException {}

    /** The server reported an error. */
    class ServerErrorException extends BackendException {}

    /** The server's reply could not be understood. */
    class ProtocolException extends BackendException {}

    /** A CAS loop kept losing to concurrent writers. */
    class ConflictException extends Exception {}

    /** The backend, or this libmcds, does not support the operation. */
    class UnsupportedException extends Exception {}

    /** A blocking call (lock acquire) gave up waiting. */
    class WaitTimeoutException extends Exception {}

    /**
     * A lock's lease was lost while its holder still worked: thrown by
     * Lock::refresh() and by Lock::synchronized() after the callback.
     * Another owner may have overlapped it. The code is 0: libmcds
     * reported no error.
     */
    class LockLostException extends Exception {}
}
