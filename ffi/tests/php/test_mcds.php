<?php
// libmcds from PHP through FFI, against real memcached: the route for
// php-cli scripts (FFI is refused under php-fpm/php-cgi by Debian's default
// ffi.enable=preload; the extension in bindings/php is the route there).
// Needs MCDS_LIB, MCDS_HEADER (include/mcds_php.h) and MCDS_TEST_SERVERS.

// include/mcds_php.h is include/mcds.h as FFI::cdef takes it, as it is.
$ffi = FFI::cdef(file_get_contents(getenv('MCDS_HEADER')), getenv('MCDS_LIB'));

// The header's constants, as FFI reads them.
define('MCDS_OK', $ffi->MCDS_OK);
define('MCDS_NULL_ARGUMENT', $ffi->MCDS_NULL_ARGUMENT);
define('MCDS_INVALID_KEY', $ffi->MCDS_INVALID_KEY);
define('MCDS_WAIT_TIMEOUT', $ffi->MCDS_WAIT_TIMEOUT);

$checks = 0;
function ok($ffi, int $code, int $want = MCDS_OK): void {
    global $checks;
    $checks++;
    if ($code !== $want) {
        // FFI returns a `const char *` as a PHP string already: no FFI::string().
        fwrite(STDERR, sprintf("got %s, expected %s: %s\n",
            $ffi->mcds_result_name($code), $ffi->mcds_result_name($want),
            $ffi->mcds_last_error_message()));
        exit(1);
    }
}
function check(bool $cond, string $what): void {
    global $checks;
    $checks++;
    if (!$cond) { fwrite(STDERR, "check failed: $what\n"); exit(1); }
}

// Member bytes cross as (uint8_t*, size_t): copy a PHP string into a buffer.
function bytes($ffi, string $s) {
    $buf = $ffi->new('uint8_t[' . max(1, strlen($s)) . ']', false);
    FFI::memcpy($buf, $s, strlen($s));
    return $buf;
}

$store = $ffi->new('mcds_store*');
ok($ffi, $ffi->mcds_store_new_memcached(getenv('MCDS_TEST_SERVERS'), FFI::addr($store)));

// The failure path itself (c_abi.rs runs it): report the code's name and
// libmcds's message, exit 1, no crash.
if (getenv('MCDS_TEST_FAIL_ON_PURPOSE')) {
    $counter = $ffi->new('mcds_counter*');
    ok($ffi, $ffi->mcds_counter_new($store, 'bad key', FFI::addr($counter)));
}

$counter = $ffi->new('mcds_counter*');
$value = $ffi->new('uint64_t');
ok($ffi, $ffi->mcds_counter_new($store, 'php-hits', FFI::addr($counter)));
for ($i = 0; $i < 100; $i++) {
    ok($ffi, $ffi->mcds_counter_incr($counter, 1, FFI::addr($value)));
}
ok($ffi, $ffi->mcds_counter_get($counter, FFI::addr($value)));
check($value->cdata === 100, 'counter is 100');

$lock = $ffi->new('mcds_lock*');
$other = $ffi->new('mcds_lock*');
$flag = $ffi->new('bool');
ok($ffi, $ffi->mcds_lock_new($store, 'php-job', 30, FFI::addr($lock)));
ok($ffi, $ffi->mcds_lock_new($store, 'php-job', 30, FFI::addr($other)));
ok($ffi, $ffi->mcds_lock_try_acquire($lock, FFI::addr($flag)));
check($flag->cdata === true, 'acquired');
ok($ffi, $ffi->mcds_lock_acquire($other, 50), MCDS_WAIT_TIMEOUT);
ok($ffi, $ffi->mcds_lock_release($lock, FFI::addr($flag)));
check($flag->cdata === true, 'released');

$set = $ffi->new('mcds_set*');
ok($ffi, $ffi->mcds_set_new($store, 'php-tags', FFI::addr($set)));
$buffers = [];
foreach (['php', 'with space', "\x00\xff"] as $m) {
    $buffers[] = $buf = bytes($ffi, $m);
    ok($ffi, $ffi->mcds_set_add($set, $buf, strlen($m)));
}
$buffers[] = $buf = bytes($ffi, 'php');
ok($ffi, $ffi->mcds_set_remove($set, $buf, 3));
$list = $ffi->new('mcds_bytes_list*');
$n = $ffi->new('size_t');
ok($ffi, $ffi->mcds_set_members($set, FFI::addr($list)));
ok($ffi, $ffi->mcds_bytes_list_len($list, FFI::addr($n)));
$got = [];
for ($i = 0; $i < $n->cdata; $i++) {
    $data = $ffi->new('const uint8_t*');
    $len = $ffi->new('size_t');
    ok($ffi, $ffi->mcds_bytes_list_get($list, $i, FFI::addr($data), FFI::addr($len)));
    $got[] = FFI::string($data, $len->cdata);
}
check($got === ['with space', "\x00\xff"], 'members: ' . json_encode(array_map('bin2hex', $got)));
$ffi->mcds_bytes_list_free($list);

// Sketches: distinct pages, and days active.
$hll = $ffi->new('mcds_hll*');
$changed = $ffi->new('bool');
ok($ffi, $ffi->mcds_hll_new($store, 'php-pages', FFI::addr($hll)));
for ($i = 0; $i < 300; $i++) {
    $page = '/page/' . ($i % 100);
    $buf = bytes($ffi, $page);
    ok($ffi, $ffi->mcds_hll_add($hll, $buf, strlen($page), FFI::addr($changed)));
    FFI::free($buf);
}
ok($ffi, $ffi->mcds_hll_count($hll, FFI::addr($value)));
check($value->cdata >= 97 && $value->cdata <= 103, 'about 100 distinct pages');
$ffi->mcds_hll_free($hll);
$days = $ffi->new('mcds_bitmap*');
$previous = $ffi->new('bool');
ok($ffi, $ffi->mcds_bitmap_new($store, 'php-days', 1767225600, 86400000, FFI::addr($days)));
ok($ffi, $ffi->mcds_bitmap_set($days, 4, FFI::addr($previous)));
check(!$previous->cdata, 'bit 4 was clear');
ok($ffi, $ffi->mcds_bitmap_set($days, 4, FFI::addr($previous)));
check($previous->cdata, 'bit 4 is set');
ok($ffi, $ffi->mcds_bitmap_count($days, 0, 30, FFI::addr($value)));
check($value->cdata === 1, 'one day active');
$ffi->mcds_bitmap_free($days);

// Bad input: documented codes, no crash.
ok($ffi, $ffi->mcds_counter_new(null, 'x', FFI::addr($counter)), MCDS_NULL_ARGUMENT);
ok($ffi, $ffi->mcds_counter_new($store, 'bad key', FFI::addr($counter)), MCDS_INVALID_KEY);
ok($ffi, $ffi->mcds_counter_incr($counter, 1, null), MCDS_NULL_ARGUMENT);

$ffi->mcds_counter_free($counter);
$ffi->mcds_lock_free($lock);
$ffi->mcds_lock_free($other);
$ffi->mcds_set_free($set);
$ffi->mcds_store_free($store);
foreach ($buffers as $buf) { FFI::free($buf); }
echo "php: $checks checks passed\n";
