<?php

declare(strict_types=1);

namespace RedisLock\Symfony\Messenger;

use RedisLock\Client;
use RedisLock\Task;
use Symfony\Component\Messenger\Envelope;
use Symfony\Component\Messenger\Exception\LogicException;
use Symfony\Component\Messenger\Exception\MessageDecodingFailedException;
use Symfony\Component\Messenger\Stamp\DelayStamp;
use Symfony\Component\Messenger\Stamp\TransportMessageIdStamp;
use Symfony\Component\Messenger\Transport\Receiver\ListableReceiverInterface;
use Symfony\Component\Messenger\Transport\Receiver\MessageCountAwareInterface;
use Symfony\Component\Messenger\Transport\Receiver\QueueReceiverInterface;
use Symfony\Component\Messenger\Transport\Serialization\PhpSerializer;
use Symfony\Component\Messenger\Transport\Serialization\SerializerInterface;
use Symfony\Component\Messenger\Transport\TransportInterface;

/**
 * A Messenger transport on redislock's leased queues. A received message is
 * leased to its worker for `lease` seconds (default 3600, Symfony's Redis
 * transport's `redeliver_timeout`: nothing renews a lease while a handler
 * runs, so a shorter lease lets a second worker take a message the first
 * still handles, unless the handler calls `keepalive()`); `ack()` and `reject()` remove
 * it, and a worker that dies before either loses nothing: the message is
 * delivered again when the lease ends. `get()` waits up to `wait` seconds
 * for a message without polling, woken by the send. Handler failures are
 * retried by Messenger's own retry strategy (it sends a new message with a
 * delay); the queue's dead letters take a message after `maxAttempts`
 * deliveries that no worker acknowledged (workers killed by it), and at
 * once when it cannot be decoded (its class gone after a deploy: `get()`
 * then throws, as Symfony's own transports do). The envelopes of `find()`
 * and `all()` can be acked or rejected too: that removes the message
 * (Messenger's `failed:retry` and `failed:remove` commands).
 */
final class Transport implements TransportInterface, MessageCountAwareInterface, ListableReceiverInterface, QueueReceiverInterface
{
    /** The longest delay a queue takes, in seconds (2^31 - 1): a longer DelayStamp is that. */
    private const LONGEST_DELAY = 2147483647;

    private SerializerInterface $serializer;
    /** @var array<string, \RedisLock\Queue> */
    private array $opened = [];

    /**
     * @param list<string> $queues the first receives what is sent (unless a
     *                             QueueStamp names another of them); get()
     *                             takes from all, the first that has a
     *                             message first
     */
    public function __construct(
        private Client $client,
        private array $queues = ['messages'],
        ?SerializerInterface $serializer = null,
        private float $lease = 3600,
        private float $wait = 1,
        private int $maxAttempts = 5,
        private ?int $partitions = null,
    ) {
        if ($queues === [] || array_filter($queues, fn ($q) => !is_string($q) || $q === '') !== []) {
            throw new \InvalidArgumentException('redislock transport: queues must be a non-empty list of names');
        }
        $this->queues = array_values($queues);
        $this->serializer = $serializer ?? new PhpSerializer();
    }

    /** The leased queue named `$name`. */
    public function queue(string $name): \RedisLock\Queue
    {
        return $this->opened[$name] ??= $this->client->queue($name, ['lease' => $this->lease, 'maxAttempts' => $this->maxAttempts]
            + ($this->partitions === null ? [] : ['partitions' => $this->partitions]));
    }

    public function send(Envelope $envelope): Envelope
    {
        // A transport sends only to the queues it serves: a stamp for
        // another's (a message failed on the main transport, sent on to the
        // failure transport with its stamp) is not its business.
        $queue = $envelope->last(QueueStamp::class)?->queue;
        if ($queue === null || !in_array($queue, $this->queues, true)) {
            $queue = $this->queues[0];
        }
        $delay = $envelope->last(DelayStamp::class)?->getDelay() ?? 0;
        $id = bin2hex(random_bytes(16));
        $this->queue($queue)->enqueue($id, serialize($this->serializer->encode($envelope)), min(max(0, $delay) / 1000, self::LONGEST_DELAY));
        return $envelope->with(new TransportMessageIdStamp($id));
    }

    public function get(): iterable
    {
        return $this->getFromQueues($this->queues);
    }

    public function getFromQueues(array $queueNames): iterable
    {
        $queues = array_map(fn ($name) => $this->queue((string) $name), array_values($queueNames));
        $tasks = $this->client->reserve($queues, 1, null, $this->wait);
        return array_map(fn (Task $task) => $this->received($task), $tasks);
    }

    public function ack(Envelope $envelope): void
    {
        $this->settle($envelope);
    }

    /** Removes the message (Messenger sends a retry, if any, before this). */
    public function reject(Envelope $envelope): void
    {
        $this->settle($envelope);
    }

    /**
     * A new lease of `$seconds` (default: the transport's) for a message a
     * handler works on long; false when the lease was already lost.
     */
    public function keepalive(Envelope $envelope, ?int $seconds = null): bool
    {
        $stamp = self::stamp($envelope);
        return $this->queue($stamp->queue)->extend($stamp->task, $seconds);
    }

    /** Messages waiting in the queues: due now and delayed. */
    public function getMessageCount(): int
    {
        $n = 0;
        foreach ($this->queues as $name) {
            $m = $this->queue($name)->metrics();
            $n += $m['ready'] + $m['delayed'];
        }
        return $n;
    }

    public function all(?int $limit = null): iterable
    {
        foreach ($this->queues as $name) {
            foreach ($this->queue($name)->peek(max(1, min($limit ?? 1000, 1000))) as $row) {
                if ($limit !== null && $limit-- <= 0) {
                    return;
                }
                yield $this->decoded($row['id'], $row['payload'])->with(new FoundStamp($row['id'], $name));
            }
        }
    }

    /** The message waiting in a queue under `$id` (not one a worker has now). */
    public function find($id): ?Envelope
    {
        foreach ($this->queues as $name) {
            $row = $this->queue($name)->find((string) $id);
            if ($row !== null && $row['state'] === 'queued') {
                return $this->decoded($row['id'], $row['payload'])->with(new FoundStamp($row['id'], $name));
            }
        }
        return null;
    }

    /**
     * The envelope of a reserved task. A payload that cannot be decoded
     * sends its task to the dead letters at once, and throws.
     */
    private function received(Task $task): Envelope
    {
        try {
            $envelope = $this->decoded($task->id(), $task->payload());
        } catch (MessageDecodingFailedException $e) {
            $this->queue($task->queue())->bury($task, $e::class . ': ' . $e->getMessage());
            throw $e;
        }
        return $envelope->with(new ReceivedStamp($task, $task->queue()));
    }

    private function decoded(string $id, ?string $payload): Envelope
    {
        $encoded = $payload === null ? false : @unserialize($payload, ['allowed_classes' => false]);
        if (!is_array($encoded)) {
            throw new MessageDecodingFailedException("redislock transport: message $id is not one this transport sent");
        }
        return $this->serializer->decode($encoded)->with(new TransportMessageIdStamp($id));
    }

    /** Ends a received message's lease, or removes a found one. */
    private function settle(Envelope $envelope): void
    {
        $found = $envelope->last(FoundStamp::class);
        if ($found !== null && $envelope->last(ReceivedStamp::class) === null) {
            $this->queue($found->queue)->remove([$found->id]);
            return;
        }
        $stamp = self::stamp($envelope);
        $this->queue($stamp->queue)->ack($stamp->task);
    }

    private static function stamp(Envelope $envelope): ReceivedStamp
    {
        return $envelope->last(ReceivedStamp::class)
            ?? throw new LogicException('No RedisLock\Symfony\Messenger\ReceivedStamp or FoundStamp found on the Envelope.');
    }
}
