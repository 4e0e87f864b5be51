<?php
/** Statistics the benchmarks share. */

/** The middle value (of an even count, the upper of the two middle ones). */
function median(array $values): float
{
    sort($values);
    return $values[intdiv(count($values), 2)];
}
