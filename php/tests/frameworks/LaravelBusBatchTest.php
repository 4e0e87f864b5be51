<?php

use Illuminate\Bus\Batch;
use Illuminate\Bus\BatchFactory;
use Illuminate\Bus\PendingBatch;
use Illuminate\Container\Container;
use Illuminate\Tests\Bus\BusBatchTest;
use RedisLock\Laravel\BatchRepository;

if (!class_exists(BusBatchTest::class) || !class_exists(Mockery::class)) {
    /** Stands in, visibly, where the mirror did not serve the framework's source package (tools/frameworks.sh). */
    final class LaravelBusBatchTest extends RedisLockTestCase
    {
        public function testTheFrameworksOwnSuite(): void
        {
            $this->markTestSkipped("the framework's own BusBatchTest is not here: the mirror did not serve Debian's php-laravel-framework source package of this release, or php-mockery is missing");
        }
    }
    return;
}

/**
 * Laravel's own BusBatchTest (Debian's php-laravel-framework source
 * package, unmodified) with its batches in redislock's repository in place
 * of the database one; its three tests of the database repository's own
 * Postgres encoding are skipped, saying so.
 */
final class LaravelBusBatchTest extends BusBatchTest
{
    private const DATABASE_ONLY = "a test of Laravel's DatabaseBatchRepository on Postgres (its options' encoding), not of a batch repository's contract";

    public function test_options_serialization_on_postgres()
    {
        $this->markTestSkipped(self::DATABASE_ONLY);
    }

    /** @dataProvider serializedOptions */
    public function test_options_unserialize_on_postgres($serialize, $options)
    {
        $this->markTestSkipped(self::DATABASE_ONLY);
    }

    protected function createTestBatch($queue, $allowFailures = false)
    {
        $redis = RedisServer::$main->client();
        $redis->select(5);
        $redis->flushDb();
        $client = new RedisLock\Client(RedisServer::$main->dsn() . '/5');
        $repository = new BatchRepository(new BatchFactory($queue), $client->batches('job_batches'));
        $pending = new PendingBatch(new Container(), collect());
        // As the parent's, of its Laravel version: progress() is Laravel 10's.
        if (method_exists($pending, 'progress')) {
            $pending->progress(function (Batch $batch) {
                $_SERVER['__progress.batch'] = $batch;
                $_SERVER['__progress.count']++;
            });
        }
        $pending
            ->then(function (Batch $batch) {
                $_SERVER['__then.batch'] = $batch;
                $_SERVER['__then.count']++;
            })
            ->catch(function (Batch $batch, $e) {
                $_SERVER['__catch.batch'] = $batch;
                $_SERVER['__catch.exception'] = $e;
                $_SERVER['__catch.count']++;
            })
            ->finally(function (Batch $batch) {
                $_SERVER['__finally.batch'] = $batch;
                $_SERVER['__finally.count']++;
            })
            ->allowFailures($allowFailures)
            ->onConnection('test-connection')
            ->onQueue('test-queue');
        return $repository->store($pending);
    }
}
