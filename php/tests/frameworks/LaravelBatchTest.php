<?php

use Illuminate\Bus\Batch;
use Illuminate\Bus\BatchFactory;
use Illuminate\Bus\BatchRepository as BatchRepositoryContract;
use Illuminate\Bus\PendingBatch;
use Illuminate\Container\Container;
use Illuminate\Support\Facades\Bus;
use Orchestra\Testbench\TestCase;
use RedisLock\Laravel\BatchRepository;

/**
 * Laravel's job batches (`Bus::batch()`) and chains (`Bus::chain()`) on
 * redislock: the batch repository in Redis, no database, its jobs run by
 * Laravel's own worker in separate processes, some SIGKILLed mid-job
 * (LaravelBusBatchTest runs Laravel's own tests of batches against the
 * repository).
 */
final class LaravelBatchTest extends TestCase
{
    use Processes;

    private Redis $redis;

    protected function setUp(): void
    {
        parent::setUp();
        require_once __DIR__ . '/laravel/BatchedJob.php';
        $this->redis = RedisServer::$main->client();
        $this->redis->select(5);
        $this->redis->flushDb();
    }

    private static function worker(): array
    {
        return self::start('$argv = ["worker", "127.0.0.1", "' . RedisServer::$main->port . '", "1.0", "1.0"]; require "'
            . __DIR__ . '/laravel/worker.php";', self::laravelIni());
    }

    /**
     * Runs workers until `$done()` says so, SIGKILLing one every 150 ms
     * `$kills` times, each in the middle of a job (while its `in-job:<pid>`
     * mark lives: BatchedJob): a kill between a job's count and its ack
     * would run it again and count it again, as Laravel does.
     */
    private function work(int $workers, int $kills, Closure $done): int
    {
        $running = [];
        for ($i = 0; $i < $workers; $i++) {
            $running[] = self::worker();
        }
        $killed = 0;
        $deadline = microtime(true) + 60;
        while (!$done()) {
            if (microtime(true) > $deadline) {
                foreach ($running as $w) {
                    posix_kill($w[2], SIGKILL);
                }
                $this->fail('the work never ended; the workers said: ' . implode("\n", array_map(self::finish(...), $running)));
            }
            usleep(150000);
            if ($killed < $kills) {
                $i = null;
                for ($tries = 0; $i === null && $tries < 500; $tries++) {
                    foreach ($running as $n => $w) {
                        if ($this->redis->exists("in-job:{$w[2]}")) {
                            $i = $n;
                            break;
                        }
                    }
                    $i ?? usleep(2000);
                }
                $this->assertNotNull($i, 'no worker was in a job for a second');
                posix_kill($running[$i][2], SIGKILL);
                self::finish($running[$i]);
                $running[$i] = self::worker();
                $killed++;
            }
        }
        foreach ($running as $w) {
            posix_kill($w[2], SIGTERM);
        }
        foreach ($running as $w) {
            self::finish($w);
        }
        return $killed;
    }

    /** @return list<string> */
    private function said(string $list): array
    {
        return $this->redis->lRange($list, 0, -1);
    }

    public function testTheRepositoryIsRedislocksAndNeedsNoDatabase(): void
    {
        $this->assertInstanceOf(BatchRepository::class, $this->app->make(BatchRepositoryContract::class));
        $this->assertFalse($this->app->bound('db') && $this->app['db'] instanceof Illuminate\Database\DatabaseManager);
        $batch = Bus::batch([new BatchedJob(1)])->name('import')->onConnection('redislock')->dispatch();
        $this->assertSame(['import', 1, 1], [$batch->name, $batch->totalJobs, $batch->pendingJobs]);
        $found = Bus::findBatch($batch->id);
        $this->assertSame($batch->id, $found->id);
        $this->assertEquals(0, $found->progress());
        $this->assertNull(Bus::findBatch('no-such-batch'));
        $this->assertSame(1, $this->redis->zCard('batches:{job_batches}:all'));
    }

    public function testABatchRunsItsCallbacksOnceThroughWorkersKilledMidJob(): void
    {
        $jobs = 40;
        $fine = Bus::batch(array_map(fn ($n) => new BatchedJob($n, 40), range(1, $jobs)))
            ->then(BatchCallbacks::say('then {id} {pending}'))
            ->catch(BatchCallbacks::say('catch {id}'))
            ->finally(BatchCallbacks::say('finally {id}'))
            ->onConnection('redislock')->dispatch();
        // Two jobs fail for good: with allowFailures() the rest run, then()
        // never does (Laravel's rule: every job must succeed), catch() once.
        $failing = Bus::batch(array_map(fn ($n) => new BatchedJob($n, 40, in_array($n, [105, 110], true)), range(101, 110)))
            ->then(BatchCallbacks::say('then {id}'))
            ->catch(BatchCallbacks::say('catch {id}'))
            ->finally(BatchCallbacks::say('finally {id}'))
            ->allowFailures()->onConnection('redislock')->dispatch();

        $kills = $this->work(3, 6, fn () => Bus::findBatch($fine->id)->finished()
            && Bus::findBatch($failing->id)->pendingJobs === 2 && count($this->said('callbacks')) >= 4);
        $this->assertSame(6, $kills);
        usleep(300000);

        $callbacks = $this->said('callbacks');
        sort($callbacks);
        $expected = ["catch {$failing->id}", "finally {$failing->id}", "finally {$fine->id}", "then {$fine->id} 0"];
        sort($expected);
        $this->assertSame($expected, $callbacks, 'each callback once, then() only for the batch without failures');

        // Laravel counts a job each time it ends (its own BusBatchTest
        // counts one job id twice): a worker killed after a job ended and
        // before its ack runs it again, and it counts again. So a batch's
        // pending count is exact but for the jobs that ran to their end
        // twice, each of which may have taken one more off it.
        $lines = $this->said('batched');
        $ends = array_count_values(array_map('intval', $lines));
        $again = fn (array $jobs) => array_sum(array_map(fn ($n) => max(0, ($ends[$n] ?? 0) - 1), $jobs));
        $fine = Bus::findBatch($fine->id);
        $this->assertSame([40, 0], [$fine->totalJobs, $fine->failedJobs]);
        $this->assertLessThanOrEqual(0, $fine->pendingJobs, 'no count lost');
        $this->assertGreaterThanOrEqual(-$again(range(1, $jobs)), $fine->pendingJobs, 'no job counted more often than it ended');
        $this->assertGreaterThanOrEqual(100, $fine->progress());
        $this->assertTrue($fine->finished());
        $failing = Bus::findBatch($failing->id);
        $this->assertSame(10, $failing->totalJobs);
        $this->assertLessThanOrEqual(2, $failing->pendingJobs, 'no count lost');
        $this->assertGreaterThanOrEqual(2 - $again(range(101, 110)), $failing->pendingJobs);
        $this->assertGreaterThanOrEqual(2, $failing->failedJobs);
        $this->assertCount(2, $failing->failedJobIds);
        $this->assertCount(2, array_unique($failing->failedJobIds), 'each failed job once');
        $this->assertFalse($failing->cancelled());

        $ran = array_unique(array_map(fn ($line) => (int) $line, $lines));
        sort($ran);
        $this->assertSame([...range(1, $jobs), ...range(101, 104), ...range(106, 109)], $ran, 'every job that does not fail ran to its end');
        $this->assertSame(0, Illuminate\Support\Facades\Queue::connection('redislock')->size());
    }

    public function testACancelledBatchsJobsSeeItThroughBatch(): void
    {
        $batch = Bus::batch(array_map(fn ($n) => new BatchedJob($n), range(1, 5)))->onConnection('redislock')->dispatch();
        Bus::findBatch($batch->id)->cancel();
        $this->work(1, 0, fn () => count($this->said('batched')) === 5);
        $skipped = $this->said('batched');
        sort($skipped);
        $this->assertSame(array_map(fn ($n) => "$n skipped", range(1, 5)), $skipped);
        $batch = $batch->fresh();
        $this->assertTrue($batch->cancelled());
        $this->assertTrue($batch->finished());
    }

    public function testAFailedJobCancelsABatchThatAllowsNoFailures(): void
    {
        $batch = Bus::batch([new BatchedJob(1, 0, true)])
            ->catch(BatchCallbacks::say('catch {message}'))
            ->onConnection('redislock')->dispatch();
        $this->work(1, 0, fn () => count($this->said('callbacks')) === 1);
        $this->assertSame(['catch job 1 fails attempt 1'], $this->said('callbacks'));
        $batch = $batch->fresh();
        $this->assertTrue($batch->cancelled());
        $this->assertSame(1, $batch->failedJobs);
    }

    public function testJobsAddedFromAJobAndPruning(): void
    {
        $repository = $this->app->make(BatchRepositoryContract::class);
        $batch = Bus::batch([new BatchedJob(1)])->onConnection('redislock')->dispatch();
        $batch->add([new BatchedJob(2), new BatchedJob(3)]);
        $this->assertSame([3, 3], [$batch->fresh()->totalJobs, $batch->fresh()->pendingJobs]);
        $this->work(1, 0, fn () => $batch->fresh()->finished());
        $this->assertSame(0, $repository->prune(now()->subHour()));
        $other = Bus::batch([new BatchedJob(4)])->onConnection('redislock')->dispatch();
        $this->assertSame(1, $repository->prune(now()->addSecond()), 'the finished batch only');
        $this->assertNull(Bus::findBatch($batch->id));
        $this->assertSame(1, $repository->pruneUnfinished(now()->addSecond()));
        $this->assertNull(Bus::findBatch($other->id));
        $this->assertSame([], $this->redis->keys('batches:*'), 'nothing left of the batches');
    }

    public function testListingIsNewestFirstInPages(): void
    {
        $repository = $this->app->make(BatchRepositoryContract::class);
        $ids = [];
        foreach (range(1, 5) as $n) {
            $ids[] = $repository->store((new PendingBatch(new Container(), collect()))->name("b$n"))->id;
        }
        $this->assertSame(['b5', 'b4', 'b3'], array_map(fn ($b) => $b->name, $repository->get(3)));
        $this->assertSame(['b2', 'b1'], array_map(fn ($b) => $b->name, $repository->get(3, $ids[2])));
        $sorted = $ids;
        sort($sorted);
        $this->assertSame($ids, $sorted, 'ids sort in the order the batches were made');
    }

    public function testAChainRunsInOrderAndStopsAtAFailure(): void
    {
        Bus::chain([new BatchedJob(1), new BatchedJob(2), new BatchedJob(3)])->onConnection('redislock')->dispatch();
        Bus::chain([new BatchedJob(11), new BatchedJob(12, 0, true), new BatchedJob(13)])
            ->catch(BatchCallbacks::say('chain caught: {message}'))
            ->onConnection('redislock')->dispatch();
        $this->work(2, 0, fn () => count($this->said('batched')) === 4 && count($this->said('callbacks')) === 1);
        usleep(300000);
        $ran = $this->said('batched');
        $this->assertSame(['1 1', '2 1', '3 1'], array_values(array_filter($ran, fn ($l) => (int) $l < 10)), 'in order');
        $this->assertSame(['11 1'], array_values(array_filter($ran, fn ($l) => (int) $l > 10)), 'nothing after the failure');
        $this->assertSame(['chain caught: job 12 fails attempt 1'], $this->said('callbacks'));
    }
}
