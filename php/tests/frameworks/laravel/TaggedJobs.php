<?php

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Database\Eloquent\Model;
use Illuminate\Foundation\Bus\Dispatchable;

/** A model of the tag tests (never saved: its key is set by hand). */
final class TaggedCustomer extends Model
{
}

/** A job that says its own tags, some of which no task can take. */
final class SelfTaggedJob implements ShouldQueue
{
    use Dispatchable, Queueable;

    public function tags(): array
    {
        return ['import-7', 'two words', '', str_repeat('x', 101), "line\n", 'import-7', 42, ['nested']];
    }

    public function handle(): void
    {
    }
}

/** A job tagged, as Horizon tags it, by the models it holds. */
final class ModelJob implements ShouldQueue
{
    use Dispatchable, Queueable;

    public function __construct(public TaggedCustomer $customer, public $others = null, private string $note = 'n')
    {
    }

    public function handle(): void
    {
    }
}
