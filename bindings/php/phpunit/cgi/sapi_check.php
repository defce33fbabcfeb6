<?php
// The point of the extension: under php-cgi (as under php-fpm) with
// Debian's default ffi.enable=preload, FFI is refused, and mcds works.
require __DIR__ . '/checks.inc';

check(PHP_SAPI === 'cgi-fcgi', 'runs as a CGI request', PHP_SAPI);
check(getenv('GATEWAY_INTERFACE') === 'CGI/1.1', 'with the CGI environment');
check(ini_get('ffi.enable') === 'preload', "Debian's default ffi.enable", (string)ini_get('ffi.enable'));
if (extension_loaded('ffi')) {
    try {
        FFI::cdef('int abs(int);');
        check(false, 'FFI is refused here');
    } catch (FFI\Exception $e) {
        check(str_contains($e->getMessage(), 'ffi.enable'), 'FFI is refused here', $e->getMessage());
    }
}
check(extension_loaded('mcds'), 'the mcds extension is loaded');
check(Mcds\version() === phpversion('mcds'), 'Mcds\version()', Mcds\version());
