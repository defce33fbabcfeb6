<?php
require __DIR__ . '/checks.inc';

foreach (stores() as $backend => $store) {
    try {
        $store->counter('bad key');
        check(false, "$backend: a bad key throws");
    } catch (Mcds\InvalidKeyException $e) {
        check($e->getCode() === 100 && str_contains($e->getMessage(), 'contains a space'),
            "$backend: a bad key is an InvalidKeyException with libmcds's message", $e->getMessage());
    }
}
$dead = getenv('MCDS_DEAD_SERVER');
if ($dead) {
    try {
        Mcds\Store::memcached($dead)->counter('x')->incr();
        check(false, 'a dead server throws');
    } catch (Mcds\BackendException $e) {
        check($e instanceof Mcds\IoException, 'a dead server is an IoException', get_class($e));
    }
}
try {
    Mcds\Store::memory()->counter('x')->incr(-1);
    check(false, 'a negative delta throws');
} catch (ValueError $e) {
    check(true, 'a negative delta is a ValueError');
}
