<?php
// Store options (through mcds_store_builder_*) and key prefixes, as a CGI request.
require __DIR__ . '/checks.inc';

$servers = (string)getenv('MCDS_SERVERS');
$store = Mcds\Store::memcached($servers, connectTimeout: 0.5, ioTimeout: 0.5, itemSizeLimit: 4096);
$name = unique('opts');
check($store->counter($name)->incr(2) === 2, 'memcached with timeouts and an item size limit');
try {
    $store->table($name)->set('big', str_repeat('x', 5000));
    check(false, 'the item size limit is applied');
} catch (Mcds\ValueTooLargeException $e) {
    check(true, 'the item size limit is applied');
}
$dead = Mcds\Store::memcached((string)getenv('MCDS_DEAD_SERVER'), connectTimeout: 0.2);
try {
    $dead->counter($name)->incr();
    check(false, 'a dead server fails fast');
} catch (Mcds\BackendException $e) {
    check(true, 'a dead server fails fast');
}
foreach ([[0.0, null], [null, -1.0], [NAN, null], [null, 3601.0]] as [$connect, $io]) {
    try {
        Mcds\Store::memcached($servers, $connect, $io);
        check(false, 'a bad timeout is a ValueError');
    } catch (ValueError $e) {
        check(str_contains($e->getMessage(), 'must be greater than 0 and at most 3600 seconds'),
            'a bad timeout is a ValueError', $e->getMessage());
    }
}

$tight = Mcds\Store::memory(memoryLimit: 64 * 1024, evict: false);
try {
    for ($i = 0; $i < 200; $i++) {
        $tight->table('t')->set("m$i", str_repeat('x', 1000));
    }
    check(false, 'a full embedded store without eviction refuses writes');
} catch (Mcds\OutOfMemoryException $e) {
    check(true, 'a full embedded store without eviction refuses writes');
}
try {
    Mcds\Store::memory(memoryLimit: 10);
    check(false, 'a budget under 1 KiB is a ValueError');
} catch (ValueError $e) {
    check(true, 'a budget under 1 KiB is a ValueError');
}

foreach (stores() as $backend => $base) {
    $name = unique('prefixed');
    $a = $base->withPrefix('cgi-a/');
    $b = $base->withPrefix('cgi-b/');
    $a->counter($name)->incr(5);
    check($b->counter($name)->get() === 0 && $a->counter($name)->get() === 5
        && $base->counter($name)->get() === 0, "$backend: prefixes isolate two stores");
    try {
        $base->withPrefix('no spaces');
        check(false, "$backend: a bad prefix is refused");
    } catch (Mcds\InvalidKeyException $e) {
        check(true, "$backend: a bad prefix is refused");
    }
}
