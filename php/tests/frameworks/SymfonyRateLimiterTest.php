<?php

use RedisLock\Client;
use RedisLock\Symfony\RateLimiterFactory;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\Policy\NoLimiter;
use Symfony\Component\RateLimiter\Storage\InMemoryStorage;

/**
 * redislock's Symfony rate limiter factory: Symfony's configuration, the
 * answers of Symfony's own limiters where the policies agree (token bucket,
 * fixed window), an exact sliding window, reservations that wait, and exact
 * counts under concurrency.
 *
 * (Symfony's own limiter tests run its policies on an in-memory storage
 * with a mocked clock; they test its classes, not a LimiterInterface, so
 * they do not apply here.)
 */
final class SymfonyRateLimiterTest extends RedisLockTestCase
{
    protected function setUp(): void
    {
        if (!interface_exists(LimiterInterface::class)) {
            $this->markTestSkipped('Symfony RateLimiter (php-symfony-rate-limiter) is not packaged in this release');
        }
        parent::setUp();
    }

    /** Consumes `$tokens` in turn; each answer as [accepted, remaining tokens]. */
    private static function answers(LimiterInterface $limiter, array $tokens): array
    {
        return array_map(function (int $n) use ($limiter) {
            $limit = $limiter->consume($n);
            return [$limit->isAccepted(), $limit->getRemainingTokens(), $limit->getLimit()];
        }, $tokens);
    }

    public function testItAnswersAsSymfonysOwnWhereThePoliciesAgree(): void
    {
        foreach ([
            ['id' => 'api', 'policy' => 'token_bucket', 'limit' => 5, 'rate' => ['interval' => '1 minute', 'amount' => 2]],
            ['id' => 'login', 'policy' => 'fixed_window', 'limit' => 3, 'interval' => '15 minutes'],
        ] as $config) {
            $tokens = [1, 2, 0, 1, 1, 1, 3, 0];
            $symfony = (new Symfony\Component\RateLimiter\RateLimiterFactory($config, new InMemoryStorage()))->create('ip-1');
            $ours = (new RateLimiterFactory($config, new Client()))->create('ip-1');
            $this->assertSame(self::answers($symfony, $tokens), self::answers($ours, $tokens), $config['policy']);
        }
        $this->assertSame(['limit:{api}:t:ip-1', 'limit:{login}:f:ip-1'], $this->sortedKeys());
    }

    public function testRefusalsSayWhenToRetryAndResetStartsAfresh(): void
    {
        $limiter = (new RateLimiterFactory(['id' => 'mail', 'policy' => 'sliding_window', 'limit' => 2, 'interval' => '1 hour'], new Client()))->create();
        $this->assertTrue($limiter->consume(2)->isAccepted());
        $refused = $limiter->consume();
        $this->assertFalse($refused->isAccepted());
        $this->assertEqualsWithDelta(time() + 3600, $refused->getRetryAfter()->getTimestamp(), 5);
        try {
            $refused->ensureAccepted();
            $this->fail('refused');
        } catch (Symfony\Component\RateLimiter\Exception\RateLimitExceededException) {
        }
        $limiter->reset();
        $this->assertTrue($limiter->consume()->isAccepted());
        $this->expectException(InvalidArgumentException::class);
        $limiter->consume(3);
    }

    public function testReserveWaitsForItsTokensOrSaysItWouldWaitTooLong(): void
    {
        $limiter = (new RateLimiterFactory(['id' => 'sms', 'policy' => 'token_bucket', 'limit' => 1, 'rate' => ['interval' => '1 second', 'amount' => 20]], new Client()))->create();
        $this->assertTrue($limiter->consume()->isAccepted());
        $reservation = $limiter->reserve(1, 5);
        $this->assertTrue($reservation->getRateLimit()->isAccepted(), 'a token came within 0.05 s');
        $this->assertLessThanOrEqual(0.0, $reservation->getWaitDuration(), 'waited in the call: due now');
        $slow = (new RateLimiterFactory(['id' => 'slow', 'policy' => 'fixed_window', 'limit' => 1, 'interval' => '1 hour'], new Client()))->create();
        $this->assertTrue($slow->consume()->isAccepted());
        try {
            $slow->reserve(1, 1);
            $this->fail('an hour to wait, a second given');
        } catch (MaxWaitDurationExceededException $e) {
            $this->assertFalse($e->getRateLimit()->isAccepted());
        }
    }

    public function testConcurrentConsumersNeverPassTheLimit(): void
    {
        $code = 'require "/usr/share/php/Symfony/Component/RateLimiter/autoload.php";
            spl_autoload_register(fn ($c) => str_starts_with($c, "RedisLock\\\\Symfony\\\\") && require "' . dirname(__DIR__, 2) . '/src/Symfony/" . substr($c, 18) . ".php");
            $f = new RedisLock\Symfony\RateLimiterFactory(["id" => "checkout", "policy" => "sliding_window", "limit" => 25, "interval" => "1 minute"], new RedisLock\Client());
            $n = 0;
            for ($i = 0; $i < 20; $i++) { if ($f->create("all")->consume()->isAccepted()) { $n++; } }
            echo $n, "\n";';
        $outs = self::phpMany(array_fill(0, 30, $code));
        $this->assertSame(25, array_sum(array_map('intval', $outs)), implode('', $outs));
    }

    public function testTheConfigurationIsSymfonys(): void
    {
        $client = new Client();
        $this->assertInstanceOf(NoLimiter::class, (new RateLimiterFactory(['id' => 'x', 'policy' => 'no_limit'], $client))->create('k'));
        foreach ([
            [['policy' => 'token_bucket', 'limit' => 1, 'rate' => ['interval' => '1 second']], InvalidArgumentException::class],
            [['id' => 'x', 'policy' => 'leaky_bucket', 'limit' => 1], LogicException::class],
            [['id' => 'x', 'policy' => 'fixed_window', 'limit' => 0, 'interval' => '1 second'], InvalidArgumentException::class],
            [['id' => 'x', 'policy' => 'fixed_window', 'limit' => 1], InvalidArgumentException::class],
            [['id' => 'x', 'policy' => 'fixed_window', 'limit' => 1, 'interval' => 'soon'], LogicException::class],
            [['id' => 'x', 'policy' => 'token_bucket', 'limit' => 1], InvalidArgumentException::class],
            [['id' => 'x', 'policy' => 'fixed_window', 'limit' => 1, 'interval' => '1 second', 'storage' => 'x'], InvalidArgumentException::class],
        ] as $i => [$config, $error]) {
            try {
                new RateLimiterFactory($config, $client);
                $this->fail("config $i was accepted");
            } catch (Throwable $e) {
                $this->assertInstanceOf($error, $e, "config $i: " . $e->getMessage());
            }
        }
        $this->assertSame([], $this->sortedKeys());
    }

    private function sortedKeys(): array
    {
        $keys = $this->redis->keys('*');
        sort($keys);
        return $keys;
    }
}
