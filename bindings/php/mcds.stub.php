<?php

/**
 * The signatures of the mcds PHP extension: the source of mcds_arginfo.h
 * (regenerate with ./gen-arginfo.sh after any change here) and the file an
 * IDE reads for completion. Every C function in include/mcds.h is reached
 * from one of these methods.
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
         */
        public static function memcached(string $servers): Store {}

        /** The embedded in-process store: memcached semantics, no server. */
        public static function memory(): Store {}

        public function counter(string $name): Counter {}

        /** A lock whose lease lasts $ttl seconds (a whole number, at least 1, with this libmcds). */
        public function lock(string $name, float $ttl = 30.0): Lock {}

        public function set(string $name): Set {}

        public function windowCounter(string $name, int $slotSeconds, int $slots): WindowCounter {}

        public function rateLimiter(string $name, int $limit, int $windowSeconds, bool $sliding = false): RateLimiter {}

        public function eventLog(string $name, int $chunkSeconds, int $chunks): EventLog {}

        public function table(string $name): Table {}

        public function hyperLogLog(string $name): HyperLogLog {}

        public function bloomFilter(string $name, int $expectedItems, float $falsePositiveRate): BloomFilter {}

        public function activityBitmap(string $name, int $startUnixSeconds, int $unitMilliseconds): ActivityBitmap {}
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

        /** Add $delta; returns the new value. */
        public function incr(int $delta = 1): int {}

        /** Subtract $delta, stopping at 0; returns the new value. */
        public function decr(int $delta = 1): int {}

        /** The current value (0 if the counter does not exist). */
        public function get(): int {}
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
        /** $ttl: the lease in seconds (a whole number, at least 1, with this libmcds). */
        public function __construct(Store $store, string $name, float $ttl = 30.0) {}

        /**
         * Take the lock. Non-blocking: true if this object now holds it,
         * false if another owner does. Blocking: wait until it is free
         * (always true). True at once if this object already holds it.
         */
        public function acquire(bool $blocking = false): bool {}

        /** Wait up to $timeout seconds: true if acquired, false if it stayed taken. */
        public function acquireWithin(float $timeout): bool {}

        /**
         * Extend the lease to $ttl seconds (default: the lock's TTL).
         * Needs lock extend in libmcds (mcds_lock_extend, coming with the
         * C ABI parity work): with this libmcds it throws
         * UnsupportedException and the lease is left as it was.
         */
        public function refresh(?float $ttl = null): void {}

        /**
         * Whether this object holds a lease that has not expired by this
         * process's clock (acquired less than the TTL ago and not released).
         * A local answer: libmcds cannot yet ask the server who holds it.
         */
        public function isAcquired(): bool {}

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
         * have overlapped it): give the lock a longer TTL.
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

        public function contains(string $member): bool {}

        /** @return list<string> */
        public function members(): array {}
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

        /** Count $delta events now; returns the current slot's count. */
        public function incr(int $delta = 1): int {}

        /** The events of the last $slots - 1 complete slots. */
        public function value(): int {}
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
         * The events with $firstMs <= at <= $lastMs still kept, in time order.
         *
         * @return list<array{at_ms: int, payload: string}>
         */
        public function fetch(int $firstMs, int $lastMs): array {}
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
     * A lock's lease expired while its holder still worked (thrown by
     * Lock::synchronized after the callback): another owner may have
     * overlapped it. The code is 0: libmcds reported no error.
     */
    class LockLostException extends Exception {}
}
