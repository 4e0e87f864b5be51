<?php
// A/B of two builds of the extension (not part of `make bench`): one
// build's RedisLock\Queue enqueue, and reserve + ack, in calls per second
// for <seconds> each. Alternate the builds and take the medians:
//   for i in 1 2 3 4; do for so in old.so new.so; do
//     php -n -d extension=$so php/bench/ab_queue.php redis://127.0.0.1:6379 3 $so
//   done; done
// (how the counters were measured on the hot path: docs/decisions/).
[, $dsn, $seconds, $label] = $argv;
$c = new RedisLock\Client($dsn);
$q = $c->queue('ab-' . getmypid());
$n = 0;
$end = microtime(true) + (float) $seconds;
$t0 = hrtime(true);
while (microtime(true) < $end) {
    for ($i = 0; $i < 200; $i++) {
        $q->enqueue('t' . $n++);
    }
}
$enq = $n / ((hrtime(true) - $t0) / 1e9);
$m = 0;
$t0 = hrtime(true);
$end = microtime(true) + (float) $seconds;
while (microtime(true) < $end && $m < $n) {
    for ($i = 0; $i < 200; $i++) {
        $q->ack($q->reserve()[0]);
        $m++;
    }
}
$cycle = $m / ((hrtime(true) - $t0) / 1e9);
$q->clear();
printf("%s %.0f %.0f\n", $label, $enq, $cycle);
