// A BullMQ worker for php/bench/workers.php, as BullMQ's documentation
// writes one: a Worker with concurrency 1 and a no-op processor.
//   node worker.js <host> <port> <queue> <start: CLOCK_MONOTONIC ns>
// Works from the start time until the queue is drained; prints
// {"done": jobs, "last": ns of the last completion}.
// With "fill <jobs>" instead of the start time, adds that many jobs first
// (addBulk, 1,000 at a time; removed once complete, as the others' are).
const { Queue, Worker } = require('bullmq');

const [host, port, name, at, jobs] = process.argv.slice(2);
const connection = { host, port: Number(port) };

async function fill(n) {
  const queue = new Queue(name, { connection });
  for (let i = 0; i < n; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      batch.push({ name: 'job', data: { n: j }, opts: { removeOnComplete: true } });
    }
    await queue.addBulk(batch);
  }
  await queue.close();
}

async function work(start) {
  let done = 0;
  let last = 0n;
  const worker = new Worker(name, async () => {}, { connection, concurrency: 1, autorun: false, drainDelay: 1 });
  worker.on('completed', () => {
    done++;
    last = process.hrtime.bigint();
  });
  const drained = new Promise((resolve) => worker.on('drained', resolve));
  await worker.waitUntilReady();
  const wait = Number(start - process.hrtime.bigint()) / 1e6;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
  worker.run();
  await drained;
  await worker.close();
  process.stdout.write(JSON.stringify({ done, last: last.toString() }) + '\n');
}

(at === 'fill' ? fill(Number(jobs)) : work(BigInt(at))).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(String(e && e.stack || e) + '\n');
    process.exit(1);
  },
);
