<?php

use RedisLock\Client;
use RedisLock\ConnectionException;

/**
 * A reply must arrive whole within the read timeout and within
 * redislock.max_reply_size bytes, whatever the server does.
 *
 * @group server
 */
#[PHPUnit\Framework\Attributes\Group('server')]
final class ReplyBoundsTest extends RedisLockTestCase
{
    /**
     * Starts a server process that answers the connection's set-up commands
     * (CLIENT, AUTH, SELECT, HELLO) with +OK and the first other command by
     * calling $reply($conn); returns [process, "host:port"].
     */
    private static function misbehaving(string $reply): array
    {
        $proc = self::start(<<<PHP
            \$s = stream_socket_server('tcp://127.0.0.1:0');
            echo stream_socket_get_name(\$s, false), "\\n";
            \$c = stream_socket_accept(\$s, 30);
            // One command of the RESP request stream: its words.
            \$command = function () use (\$c) {
                \$n = (int) substr(fgets(\$c), 1);
                \$words = [];
                for (\$i = 0; \$i < \$n; \$i++) {
                    \$len = (int) substr(fgets(\$c), 1);
                    \$words[] = substr(fread(\$c, \$len + 2), 0, \$len);
                }
                return \$words;
            };
            // The handshake as a server without functions answers it (its
            // probes, FUNCTION LIST and COMMAND INFO FCALL, get nothing),
            // so the reply under test meets the call itself: met by the
            // handshake, it dropped the connection there, and the retry's
            // connection found the listener closed ("unexpected end of
            // file"), depending on timing.
            while (true) {
                \$word = strtoupper(\$command()[0] ?? '');
                if (in_array(\$word, ['CLIENT', 'AUTH', 'SELECT', 'HELLO'], true)) {
                    fwrite(\$c, "+OK\\r\\n");
                } elseif (in_array(\$word, ['FUNCTION', 'COMMAND'], true)) {
                    fwrite(\$c, "*0\\r\\n");
                } else {
                    break;
                }
            }
            (function (\$c) { $reply })(\$c);
            fclose(\$c);
            PHP);
        return [$proc, trim(fgets($proc[1][1]))];
    }

    public function testAServerThatDripFeedsAReplyCannotHoldTheCallPastTheReadTimeout(): void
    {
        // Every byte comes well within the read timeout, the whole reply
        // (28 bytes at 0.1 s each) does not.
        [$proc, $addr] = self::misbehaving(
            'foreach (str_split("\$22\r\n" . str_repeat("x", 22) . "\r\n") as $b) { fwrite($c, $b); usleep(100000); }'
        );
        $lock = new RedisLock(['dsn' => "redis://$addr", 'read_timeout' => 0.5]);
        try {
            $lock->lock('x');
            $this->fail('the drip-fed reply was accepted');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('no whole reply within the read timeout', $e->getMessage());
            $this->assertStringContainsString($addr, $e->getMessage());
        } finally {
            self::finish($proc);
        }
    }

    public function testAnEndlessReplyStopsAtTheSizeBound(): void
    {
        // A bulk string announced as 1 TB; the server gives up after 8 MB,
        // so without a bound the call would end on "end of file" instead.
        [$proc, $addr] = self::misbehaving(
            'fwrite($c, "\$1099511627776\r\n"); $chunk = str_repeat("x", 65536); for ($i = 0; $i < 128; $i++) { if (@fwrite($c, $chunk) === false) break; }'
        );
        $this->assertTrue(ini_set('redislock.max_reply_size', '1M') !== false);
        try {
            (new RedisLock("redis://$addr"))->lock('x');
            $this->fail('the endless reply was read');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('a reply larger than 1048576 bytes (redislock.max_reply_size)', $e->getMessage());
        } finally {
            ini_restore('redislock.max_reply_size');
            self::finish($proc);
        }
    }

    public function testABulkStringSaidToBeTooLargeIsRefusedAtOnce(): void
    {
        // The length line alone, then nothing: refused when it is read,
        // not after the 5 s read timeout.
        [$proc, $addr] = self::misbehaving('fwrite($c, "\$2000000\r\nxx"); sleep(10);');
        $this->assertTrue(ini_set('redislock.max_reply_size', '1M') !== false);
        $t = microtime(true);
        try {
            (new RedisLock(['dsn' => "redis://$addr", 'read_timeout' => 5]))->lock('x');
            $this->fail('a 2 MB string was waited for');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('a reply larger than 1048576 bytes (redislock.max_reply_size)', $e->getMessage());
            $this->assertLessThan(4.0, microtime(true) - $t, 'refused before the read timeout');
        } finally {
            ini_restore('redislock.max_reply_size');
            proc_terminate($proc[0]);
            self::finish($proc);
        }
    }

    /**
     * A reply the call cannot read, or an error reply, of megabytes and
     * with terminal escapes: the message quotes a short excerpt, control
     * characters escaped.
     */
    public function testMessagesQuoteAShortEscapedExcerptOfAReply(): void
    {
        $big = str_repeat("\e]0;pwned\x07", 400000);
        foreach ([
            'wrong shape' => '$out = "*1\r\n\$' . strlen($big) . '\r\n" . str_repeat("\e]0;pwned\x07", 400000) . "\r\n";',
            'error reply' => '$out = "-ERR " . str_repeat("\e]0;pwned\x07", 400000) . "\r\n";',
        ] as $case => $reply) {
            // Written whole (a socket takes a large write in parts), then
            // the connection is left open until the client is done.
            // (the same to each command of a pipeline, until the client
            // is done).
            [$proc, $addr] = self::misbehaving($reply . ' do { $left = $out; while ($left !== "") { $n = fwrite($c, $left); if (!$n) break 2; $left = substr($left, $n); } } while (fgets($c) !== false);');
            try {
                (new RedisLock("redis://$addr"))->lock('x');
                $this->fail("$case: no error");
            } catch (RedisLock\RedisLockException $e) {
                $this->assertLessThan(600, strlen($e->getMessage()), "$case: a short message");
                $this->assertStringNotContainsString("\e", $e->getMessage(), $case);
                $this->assertStringNotContainsString("\x07", $e->getMessage(), $case);
                $this->assertMatchesRegularExpression('/(\\\\x1b|\\\\u\{1b\})\]0;pwned/', $e->getMessage(), "$case: escaped");
                $this->assertStringContainsString('bytes in all)', $e->getMessage(), $case);
            } finally {
                proc_terminate($proc[0]);
                self::finish($proc);
            }
        }
    }

    public function testATooLargeReplyFromRedisLosesNothing(): void
    {
        $q = (new Client())->queue('big');
        $q->enqueue('t', str_repeat('p', 4096));
        ini_set('redislock.max_reply_size', '2K');
        try {
            (new Client())->queue('big')->reserve(1, 1);
            $this->fail('a reply over the bound was read');
        } catch (ConnectionException $e) {
            $this->assertStringContainsString('a reply larger than 2048 bytes', $e->getMessage());
        } finally {
            ini_restore('redislock.max_reply_size');
        }
        // The script ran: the task is leased, and comes back when that lease ends.
        $this->assertSame(1, $this->redis->zCard('{Queue:big}:leased'));
        $tasks = (new Client())->queue('big')->reserve(1, 30, 5);
        $this->assertCount(1, $tasks);
        $this->assertSame(str_repeat('p', 4096), $tasks[0]->payload());
        $this->assertSame(2, $tasks[0]->attempts());
    }

    public function testTheSizeBoundIsValidated(): void
    {
        foreach (['', '0', '1023', '-1M', '1.5M', 'lots', '2T', "1M\0"] as $bad) {
            $this->assertFalse(ini_set('redislock.max_reply_size', $bad), var_export($bad, true));
        }
        $this->assertSame('512M', ini_get('redislock.max_reply_size'));
        $this->assertSame('512M', ini_set('redislock.max_reply_size', '64k'));
        $this->assertSame('64k', ini_get('redislock.max_reply_size'));
        ini_restore('redislock.max_reply_size');
    }
}
