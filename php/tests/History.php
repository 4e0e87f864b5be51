<?php

/**
 * An independent checker of what processes saw, for the fault tests. A
 * hold is what one process believed: ['who', 'token', 'from', 'to'] in
 * hrtime ns (from: acquire returned; to: it released or learnt the loss).
 * A write is what a process did to the protected resource: ['who',
 * 'token', 'at', 'accepted'], in the order the resource took them.
 */
final class History
{
    /** Pairs of holds of different processes whose intervals overlap. */
    public static function overlaps(array $holds): int
    {
        $n = 0;
        foreach ($holds as $i => $a) {
            foreach (array_slice($holds, $i + 1) as $b) {
                if ($a['who'] !== $b['who'] && $a['from'] < $b['to'] && $b['from'] < $a['to']) {
                    $n++;
                }
            }
        }
        return $n;
    }

    /** Holds, in order of acquisition, whose token is not above every earlier one's. */
    public static function tokensOutOfOrder(array $holds): int
    {
        usort($holds, fn ($a, $b) => $a['from'] <=> $b['from']);
        $n = 0;
        $max = PHP_INT_MIN;
        foreach ($holds as $h) {
            if ($h['token'] !== null) {
                $n += $h['token'] <= $max ? 1 : 0;
                $max = max($max, $h['token']);
            }
        }
        return $n;
    }

    /** Writes the resource accepted with a token below one it had accepted before. */
    public static function staleAccepted(array $writes): int
    {
        $n = 0;
        $max = PHP_INT_MIN;
        foreach ($writes as $w) {
            if ($w['accepted']) {
                $n += $w['token'] < $max ? 1 : 0;
                $max = max($max, $w['token']);
            }
        }
        return $n;
    }

    /**
     * Writes that reached the resource after it had taken one with a
     * higher token: what a fence must refuse, and all it may refuse.
     */
    public static function staleWrites(array $writes): int
    {
        $n = 0;
        $max = PHP_INT_MIN;
        foreach ($writes as $w) {
            $n += $w['token'] < $max ? 1 : 0;
            $max = $w['accepted'] ? max($max, $w['token']) : $max;
        }
        return $n;
    }

    /**
     * Writes made after another process had acquired the lock with a
     * higher token: each would have overlapped that hold without fencing.
     * The fence refuses those made once that process has written; the
     * few between its acquire and its first write are not stale yet.
     */
    public static function lateWrites(array $writes, array $holds): int
    {
        $n = 0;
        foreach ($writes as $w) {
            foreach ($holds as $h) {
                if ($h['who'] !== $w['who'] && $h['token'] > $w['token'] && $h['from'] < $w['at']) {
                    $n++;
                    break;
                }
            }
        }
        return $n;
    }
}
