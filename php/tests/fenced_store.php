<?php
/**
 * The protected resource of the fault tests: a file that accepts a write
 * only with a token at least the highest it has accepted (the README's
 * fencing example), and logs every write: "who token hrtime accepted".
 */
function fenced_write(string $file, string $who, int $token): bool
{
    $f = fopen($file, 'c+');
    flock($f, LOCK_EX);
    $last = (int) stream_get_contents($f);
    $ok = $token >= $last;
    if ($ok) {
        ftruncate($f, 0);
        rewind($f);
        fwrite($f, (string) $token);
    }
    fwrite(fopen("$file.log", 'a'), sprintf("%s %d %d %d\n", $who, $token, hrtime(true), $ok));
    flock($f, LOCK_UN);
    fclose($f);
    return $ok;
}

/** The store's log as History writes. */
function fenced_log(string $file): array
{
    $writes = [];
    foreach (file("$file.log", FILE_IGNORE_NEW_LINES) ?: [] as $line) {
        [$who, $token, $at, $ok] = explode(' ', $line);
        $writes[] = ['who' => $who, 'token' => (int) $token, 'at' => (int) $at, 'accepted' => $ok === '1'];
    }
    return $writes;
}
