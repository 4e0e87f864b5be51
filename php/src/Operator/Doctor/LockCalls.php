<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use PhpParser\Node;
use PhpParser\Node\Expr;
use PhpParser\Node\Stmt;
use PhpParser\NodeFinder;

/**
 * A `RedisLock` copy with statements of its own, rewritten call by call
 * (Rewrite's part for it).
 */
trait LockCalls
{
    /**
     * A `RedisLock` copy's role methods with each Redis call replaced by
     * the extension's where it stands (the take, SET NX or SETNX, by
     * `lock()`; a DEL by `unlock()`; EXISTS and a GET compared with what
     * it stored by whether the lock is held; EXPIRE by `expire()`), the
     * wait loop around the take run once (the extension's `lock()` waits),
     * and the stale-lock takeover left to the extension; every other
     * statement stays. Why not, each a line, where a call is none of these.
     *
     * @return list<string>
     */
    private function lockCalls(): array
    {
        $static = false;
        $connection = $this->connectionProperty();
        $why = ($container = $this->containerConnection($connection)) === null ? [] : [$container];
        foreach ($this->roles as $theirs => $mine) {
            $method = $this->class['does'][$mine]['node'];
            if ($method->stmts === null) {
                $why[] = "$mine() has no body";
                continue;
            }
            $static = $static || $method->isStatic();
            $said = $this->lockCallsOf($theirs, $method);
            $said ??= $this->leftOver($method, ['expire', 'pexpire', 'watch', 'unwatch', 'multi', 'exec'], $theirs);
            if ($said !== null) {
                $why[] = "$mine(), $said";
                continue;
            }
            array_unshift($method->stmts, self::mark("{$this->ext}'s calls do the Redis work of this method; the rest is its own."));
        }
        if ($why === []) {
            $this->addDelegate($static, $connection);
        }
        return $why;
    }

    /** One method of lockCalls(); null when done, else why not. */
    private function lockCallsOf(string $theirs, Stmt\ClassMethod $method): ?string
    {
        $d = ($method->isStatic() ? 'self::' : '$this->') . 'redislockDelegate()';
        $finder = new NodeFinder();
        $name = function (Expr $call) use ($method): ?Expr {
            $key = isset($call->args[0]) ? $this->protocol->key($call->args[0]->value, $method) : null;
            return $key !== null && $key[0] === 'Lock:' && $key[1] !== null ? $key[1] : null;
        };
        $takes = $finder->find($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n) && (strtolower($n->name->toString()) === 'setnx'
            || (strtolower($n->name->toString()) === 'set' && str_contains(strtolower(Php::code($n)), "'nx'"))));
        if ($theirs !== 'lock' && $takes !== []) {
            return 'it takes a lock (' . Php::code($takes[0]) . '), which only lock() does in the original';
        }
        if ($theirs === 'lock') {
            if (count($takes) !== 1) {
                return count($takes) === 0 ? 'no SET NX of the lock\'s key was found' : 'it takes more than one lock';
            }
            $take = $takes[0];
            $lockName = $name($take);
            if ($lockName === null) {
                return 'the key it takes (' . Php::code($take->args[0]->value) . ') is not Lock:<name>';
            }
            // The stale-lock takeover (a key without TTL): the extension's lock() does it.
            if (is_string($why = $this->dropTakeover($method, $take))) {
                return $why;
            }
            if (strcasecmp($method->name->toString(), 'lock') === 0) {
                // The original's parameters: name, timeout, expire, wait interval.
                $args = array_map(fn ($p) => '$' . $p->var->name, array_slice($method->params, 1, 3));
            } else {
                // Renamed, its parameters are its own: one try, for the SET's own lease.
                $ttl = $this->ttlOf($take, $method);
                if ($ttl === null || $this->inLoop($take)) {
                    return $ttl === null ? 'the lease of its take (EX or PX) was not found' : 'it waits in a loop of its own, whose timeout the doctor cannot tell';
                }
                $args = ['0', Php::code($ttl)];
            }
            if (is_string($why = $this->runOnce($method, $take))) {
                return $why;
            }
            $got = "{$d}->lock(" . implode(', ', [Php::code($lockName), ...$args]) . ')';
            $reply = match (true) {
                !$this->class['predis'] => $got,
                strtolower($take->name->toString()) === 'setnx' => "(int) $got",
                default => "($got ? true : null)",
            };
            $this->replace($method, $take, Php::expression($reply));
        }
        $uncast = fn (Expr $e) => $e instanceof Expr\Cast ? $e->expr : $e;
        foreach ($finder->find($method->stmts, fn (Node $n) => $n instanceof Expr\BinaryOp
            && ($this->isGet($uncast($n->left)) || $this->isGet($uncast($n->right)))) as $compare) {
            $get = $this->isGet($uncast($compare->left)) ? $uncast($compare->left) : $uncast($compare->right);
            if (($lockName = $name($get)) === null) {
                return 'line ' . $get->getStartLine() . ': its GET (' . Php::code($get) . ') is not of Lock:<name>';
            }
            $holds = "!in_array({$d}->isLocking(" . Php::code($lockName) . "), ['', false], true)";
            $negated = $compare instanceof Expr\BinaryOp\NotEqual || $compare instanceof Expr\BinaryOp\NotIdentical;
            if (!$negated && !$compare instanceof Expr\BinaryOp\Equal && !$compare instanceof Expr\BinaryOp\Identical) {
                return 'line ' . $compare->getStartLine() . ': it compares its GET otherwise than for equality';
            }
            $this->replace($method, $compare, Php::expression($negated ? "!($holds)" : "($holds)"));
        }
        foreach ($finder->find($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n)) as $call) {
            $command = strtolower($call->name->toString());
            $lockName = $name($call);
            $with = fn (string $code) => $this->replace($method, $call, Php::expression($code));
            if ($lockName === null && in_array($command, ['del', 'unlink', 'exists', 'expire', 'pexpire'], true)) {
                return 'line ' . $call->getStartLine() . ': ' . Php::code($call) . ' is not of Lock:<name>';
            }
            match (true) {
                // (DEL answered a count; in a bool cast or a test, the bool does.)
                in_array($command, ['del', 'unlink'], true) => $with(($call->getAttribute('parent') instanceof Expr\Cast\Bool_ ? '' : '(int) ')
                    . "{$d}->unlock(" . Php::code($lockName) . ')'),
                $command === 'exists' => $with("(int) !in_array({$d}->isLocking(" . Php::code($lockName) . "), ['', false], true)"),
                in_array($command, ['expire', 'pexpire'], true) && $theirs !== 'lock' => $with("{$d}->expire(" . Php::code($lockName) . ', '
                    . Php::code($command === 'expire' ? $call->args[1]->value : new Expr\BinaryOp\Div($call->args[1]->value, new Node\Scalar\LNumber(1000))) . ')'),
                default => null,
            };
        }
        return null;
    }

    /** Whether `$node` is inside a loop of its method. */
    private function inLoop(Node $node): bool
    {
        for ($at = $node->getAttribute('parent'); $at !== null && !$at instanceof Stmt\ClassMethod; $at = $at->getAttribute('parent')) {
            if ($at instanceof Stmt\While_ || $at instanceof Stmt\Do_ || $at instanceof Stmt\For_ || $at instanceof Stmt\Foreach_) {
                return true;
            }
        }
        return false;
    }

    /**
     * The wait loop around the take, run once: the extension's lock() waits
     * in line itself. Its sleeps and the `break` of its time check go.
     */
    private function runOnce(Stmt\ClassMethod $method, Expr $take): ?string
    {
        $loop = $take->getAttribute('parent');
        while ($loop !== null && !$loop instanceof Stmt\While_ && !$loop instanceof Stmt\Do_ && !$loop instanceof Stmt\For_ && !$loop instanceof Stmt\ClassMethod) {
            $loop = $loop->getAttribute('parent');
        }
        if (!$loop instanceof Stmt\While_ && !$loop instanceof Stmt\Do_ && !$loop instanceof Stmt\For_) {
            return null;
        }
        $forever = $loop instanceof Stmt\Do_ || ($loop instanceof Stmt\For_ && $loop->cond === [])
            || ($loop instanceof Stmt\While_ && in_array(strtolower(Php::code($loop->cond)), ['true', '1'], true));
        if (!$forever || (new NodeFinder())->findFirstInstanceOf($loop->stmts, Stmt\Continue_::class) !== null) {
            return 'the wait loop around its take (line ' . $loop->getStartLine() . ') is not one the doctor can run once';
        }
        $body = [];
        foreach ($loop->stmts as $stmt) {
            $sleep = $stmt instanceof Stmt\Expression && $stmt->expr instanceof Expr\FuncCall && $stmt->expr->name instanceof Node\Name
                && in_array(strtolower($stmt->expr->name->toString()), ['usleep', 'sleep'], true);
            $breaks = $stmt instanceof Stmt\Break_ || ($stmt instanceof Stmt\If_ && $stmt->elseifs === [] && $stmt->else === null
                && count($stmt->stmts) === 1 && $stmt->stmts[0] instanceof Stmt\Break_);
            if (!$sleep && !$breaks) {
                $body[] = $stmt;
            }
        }
        $this->replace($method, $loop, $body);
        return null;
    }

    /** The `if` that took over a lock left without a TTL (TTL < 0 in its test): the extension's lock() does that. */
    private function dropTakeover(Stmt\ClassMethod $method, Expr $take): ?string
    {
        $taken = [];
        $branch = $take->getAttribute('parent');
        while ($branch !== null && !$branch instanceof Stmt\If_) {
            if ($branch instanceof Expr\Assign && $branch->var instanceof Expr\Variable && is_string($branch->var->name)) {
                // (`$result = ...->setnx(); if ($result != false) {...}`: the branch tests the variable.)
                $var = $branch->var->name;
                $branch = (new NodeFinder())->findFirst($method->stmts, fn (Node $n) => $n instanceof Stmt\If_
                    && (new NodeFinder())->findFirst([$n->cond], fn (Node $v) => $v instanceof Expr\Variable && $v->name === $var) !== null);
                break;
            }
            $branch = $branch->getAttribute('parent');
        }
        foreach ($branch instanceof Stmt\If_ ? $branch->stmts : [] as $stmt) {
            $taken[] = Php::code($stmt);
        }
        $isTtl = fn (Node $n) => $this->protocol->isRedisCall($n) && in_array(strtolower($n->name->toString()), ['ttl', 'pttl'], true);
        // (The TTL read into a variable first, as the seed does: `$ttl = ...->ttl($key); if ($ttl < 0)`.)
        $read = [];
        foreach ((new NodeFinder())->find($method->stmts, fn (Node $n) => $n instanceof Stmt\Expression && $n->expr instanceof Expr\Assign
            && $n->expr->var instanceof Expr\Variable && is_string($n->expr->var->name) && $isTtl($n->expr->expr)) as $stmt) {
            $read[$stmt->expr->var->name] = $stmt;
        }
        foreach ((new NodeFinder())->findInstanceOf($method->stmts, Stmt\If_::class) as $if) {
            $ttl = (new NodeFinder())->findFirst([$if->cond], fn (Node $n) => $isTtl($n)
                || ($n instanceof Expr\Variable && is_string($n->name) && isset($read[$n->name])));
            if ($ttl === null) {
                continue;
            }
            foreach ($if->stmts as $stmt) {
                $redis = (new NodeFinder())->findFirst([$stmt], fn (Node $n) => $this->protocol->isRedisCall($n)) !== null;
                if (!$redis && !in_array(Php::code($stmt), $taken, true)) {
                    return 'line ' . $stmt->getStartLine() . ': its takeover of a lock without TTL does ' . Php::code($stmt)
                        . ', which its take does not';
                }
            }
            $this->dropStatements($method, fn (Stmt $s) => $s === $if || ($ttl instanceof Expr\Variable && $s === $read[$ttl->name]));
        }
        return null;
    }
}
