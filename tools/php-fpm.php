<?php
// The php-fpm of the PHP running this script (tests and benchmarks start
// their own pools): $PHP_FPM, else Debian's php-fpmX.Y, else the php-fpm
// installed beside this PHP (official images: /usr/local/sbin); one built
// thread-safe (ZTS) or not as this PHP is, which the extension's build must
// match.

function php_fpm_binary(): ?string
{
    $prefix = dirname(PHP_BINARY, 2);
    $candidates = [getenv('PHP_FPM') ?: '', '/usr/sbin/php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION,
                   "$prefix/sbin/php-fpm", "$prefix/sbin/php-fpm" . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION];
    foreach ($candidates as $bin) {
        if ($bin !== '' && is_executable($bin)
            && str_contains((string) shell_exec(escapeshellarg($bin) . ' -n -i 2>/dev/null'), 'Thread Safety => ' . (PHP_ZTS ? 'enabled' : 'disabled'))) {
            return $bin;
        }
    }
    return null;
}
