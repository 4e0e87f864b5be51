<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use PhpParser\Node;
use PhpParser\Node\Expr;
use PhpParser\Node\Stmt;
use PhpParser\NodeFinder;

/**
 * A `Lock_Service` copy rewritten statement by statement (Rewrite's part
 * for it): the INCR and SET, the GET-compare and DEL or the script, and
 * the id helper's INCR become the extension's order locks' calls, the
 * drop-in class's or, for keys or a connection of the copy's own, its
 * `RedisLock\OrderLocks`.
 */
trait OrderLockCalls
{
    /**
     * The copy's order keys: its template and id counter as PHP code, and
     * whether they are the original's (`order_lock_%s`, `lock_unique_id`);
     * or why the doctor cannot read them.
     *
     * @return array{template: string, counter: string, seed: bool}|string
     */
    public function layout(): array|string
    {
        if ($this->layout !== null) {
            return $this->layout;
        }
        $take = $this->class['does'][$this->roles['addLock']]['node'];
        $set = (new NodeFinder())->findFirst($take->stmts ?? [], fn (Node $n) => $this->protocol->isRedisCall($n)
            && in_array(strtolower($n->name->toString()), ['set', 'setnx'], true));
        $template = $set === null || !isset($set->args[0]) ? null : $this->protocol->template($set->args[0]->value, $take);
        if ($template === null) {
            return $this->layout = 'addLock()\'s order key (' . ($set === null ? 'no SET' : $this->protocol->shown($set->args[0]->value ?? $set))
                . ') is not built in a way the doctor can read';
        }
        $counter = null;
        foreach ([$this->roles['addLock'], $this->roles['generateUniqueLockId'] ?? null] as $mine) {
            $method = $mine === null ? null : $this->class['does'][$mine]['node'];
            $incr = $method === null ? null : (new NodeFinder())->findFirst($method->stmts ?? [], fn (Node $n) => $this->isCounterCall($n));
            $counter ??= $incr?->args[0]->value ?? null;
        }
        $fixed = $counter !== null && (new NodeFinder())->findFirst([$counter], fn (Node $n) => $n instanceof Expr\Variable) === null;
        if (!$fixed) {
            return $this->layout = 'its id counter (' . ($counter === null ? 'no INCR' : $this->protocol->shown($counter)) . ') is not one the doctor can read';
        }
        return $this->layout = ['template' => $template[0], 'counter' => Php::code($counter),
            'seed' => $template[2] === 'order_lock_%s' && $this->protocol->text($counter) === 'lock_unique_id'];
    }

    /** @var array|string|null what layout() found */
    private array|string|null $layout = null;
    /** The code that reaches the extension's order locks: the drop-in class, or this copy's OrderLocks. */
    private string $orders = '';

    /** @return list<string> */
    private function orderLocks(): array
    {
        $layout = $this->layout();
        if (is_string($layout)) {
            return [$layout];
        }
        $why = [];
        // Keys of its own, or a connection only its code names (a factory's,
        // a framework's): the copy's OrderLocks, made from its connection.
        $connection = null;
        if ($this->keepsOwn()) {
            $connection = $this->takeConnection();
            if ($connection === null) {
                return ["addLock()'s connection is not one the doctor can hand to the extension" . ($layout['seed'] ? '' : ', which its keys of their own need')];
            }
        }
        $static = $connection === null || !str_contains($connection, '$this');
        $this->orders = $connection === null ? "{$this->ext}::" : ($static ? 'self::redislockOrders()->' : '$this->redislockOrders()->');
        foreach ($this->roles as $theirs => $mine) {
            $method = $this->class['does'][$mine]['node'];
            if ($method->stmts === null) {
                $why[] = "$mine() has no body";
                continue;
            }
            if (!$static && $method->isStatic()) {
                $why[] = "$mine() is static, and its connection is an object's";
                continue;
            }
            $said = match ($theirs) {
                'addLock' => $this->take($method),
                'releaseLock' => $this->release($method),
                'generateUniqueLockId' => $this->nextId($method),
                default => null,
            };
            // (The connection its calls went through, set up here, goes with them.)
            $said ??= $this->leftOver($method, ['connect', 'pconnect', 'auth', 'select', 'setoption'], $theirs);
            if ($said !== null) {
                $why[] = "$mine(), $said";
                continue;
            }
            array_unshift($method->stmts, self::mark($connection === null ? "{$this->ext}::$theirs() does the Redis work of this method."
                : "\\RedisLock\\OrderLocks::$theirs() does the Redis work of this method, on its keys and connection."));
        }
        if ($why === [] && $connection !== null) {
            $this->handedOver = true;
            $self = $static ? 'self::$' : '$this->';
            $members = Php::statements('class X { ' . ($static ? 'private static' : 'private') . ' ?\\RedisLock\\OrderLocks $redislockOrders = null; '
                . ($static ? 'private static' : 'private') . " function redislockOrders(): \\RedisLock\\OrderLocks { if ({$self}redislockOrders === null) {"
                . " \$c = $connection; {$self}redislockOrders = (new \\RedisLock\\Client(\$c instanceof \\Redis || !is_object(\$c) || !method_exists(\$c, 'client') ? \$c : \$c->client()))"
                . "->orderLocks({$layout['template']}, {$layout['counter']}); } return {$self}redislockOrders; } }")[0]->stmts;
            $members[0]->setAttribute('comments', [new \PhpParser\Comment('// redislock doctor: the extension\'s order locks, on this copy\'s keys and connection.')]);
            array_push($this->class['node']->stmts, ...$members);
        }
        return $why;
    }

    /**
     * Whether a `Lock_Service` copy keeps something of its own a swap to
     * the drop-in class would lose (keys, a connection only its code
     * names): then it is rewritten onto its `OrderLocks`.
     */
    public function keepsOwn(): bool
    {
        $layout = $this->original === 'Lock_Service' ? $this->layout() : null;
        if (!is_array($layout)) {
            return false;
        }
        // A server php.ini cannot be told (its code computes it), handed over as the copy makes it.
        $unknown = $this->protocol->connectsTo() === null && !isset($this->class['constants']['REDIS_CONFIG_HOST']);
        return !$layout['seed'] || $this->frameworkConnection() || ($unknown && $this->takeConnection() !== null);
    }

    /** The code of the connection addLock()'s SET goes through, as Protocol::connectionOf() reads it. */
    private function takeConnection(): ?string
    {
        $take = $this->class['does'][$this->roles['addLock']]['node'];
        $set = (new NodeFinder())->findFirst($take->stmts ?? [], fn (Node $n) => $this->protocol->isRedisCall($n)
            && in_array(strtolower($n->name->toString()), ['set', 'setnx'], true));
        return $set === null ? null : $this->protocol->connectionOf($set->var, $take);
    }

    /** Whether the copy's connection comes from a factory or a framework, which only its code names. */
    private function frameworkConnection(): bool
    {
        if ($this->class['factory']) {
            return true;
        }
        foreach ($this->class['does'] as $m => $d) {
            if ($this->protocol->isConnectionMethod($m) && array_intersect(['connection', 'store', 'make', 'handler', 'app', 'getinstance'], $d['calls']) !== []) {
                return true;
            }
        }
        return false;
    }

    /** addLock(): the id and the SET become the extension's addLock(); the rest stays. */
    private function take(Stmt\ClassMethod $method): ?string
    {
        $finder = new NodeFinder();
        $sets = $finder->find($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n)
            && in_array(strtolower($n->name->toString()), ['set', 'setnx'], true));
        if (count($sets) !== 1) {
            return count($sets) === 0 ? 'no SET of the order\'s key was found' : 'it SETs more than one key';
        }
        $set = $sets[0];
        $key = $this->orderKey($set->args[0]->value ?? null, $method);
        if (is_string($key)) {
            return $key;
        }
        // The id: a local variable set from INCR (or from the copy's id method) and given to the SET.
        $value = $set->args[1]->value ?? null;
        if (!$value instanceof Expr\Variable || !is_string($value->name)) {
            return 'the SET stores ' . ($value === null ? 'nothing' : Php::code($value)) . ', not an id from the counter';
        }
        $idSet = $finder->findFirst($method->stmts, fn (Node $n) => $n instanceof Expr\Assign && $n->var instanceof Expr\Variable
            && $n->var->name === $value->name);
        $source = $idSet?->expr;
        $fromCounter = $source !== null && ($this->isCounterCall($source) || $this->isIdMethodCall($source));
        if (!$fromCounter) {
            return '$' . $value->name . ' does not come from INCR of the id counter';
        }
        if (is_string($why = $this->counterKey($source))) {
            return $why;
        }
        $ttl = $this->ttlOf($set, $method);
        if ($ttl === null) {
            return 'the SET\'s lease (EX or PX) was not found';
        }
        if (!$this->before($idSet, $key[1], $ttl, $method)) {
            return 'the order id or the lease is computed after the id is taken';
        }
        // $id = <the extension's addLock()>; the SET's reply is what the client said: true or false
        // (phpredis), 1 or 0 (SETNX on Predis), OK or NULL (SET on Predis).
        $idSet->expr = Php::expression("{$this->orders}addLock(" . Php::code($key[1]) . ', ' . Php::code($ttl) . ')');
        $got = '$' . $value->name . ' !== false';
        $reply = match (true) {
            !$this->class['predis'] => $got,
            strtolower($set->name->toString()) === 'setnx' => "(int) ($got)",
            default => "($got ? true : null)",
        };
        $this->replace($method, $set, Php::expression($reply));
        // The EXPIRE a SETNX needed: the extension's lock has its lease already.
        $this->dropCalls($method, ['expire', 'pexpire']);
        return null;
    }

    /** releaseLock(): the GET-compare and the DEL (or a compare-and-delete script) become the extension's releaseLock(). */
    private function release(Stmt\ClassMethod $method): ?string
    {
        $finder = new NodeFinder();
        $evals = $finder->find($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n) && strtolower($n->name->toString()) === 'eval');
        if ($evals !== []) {
            return $this->releaseByScript($method, $evals);
        }
        $compares = $finder->find($method->stmts, fn (Node $n) => $n instanceof Expr\BinaryOp
            && ($this->isGet($n->left) || $this->isGet($n->right)));
        if (count($compares) !== 1 || !($compares[0] instanceof Expr\BinaryOp\Equal || $compares[0] instanceof Expr\BinaryOp\Identical
            || $compares[0] instanceof Expr\BinaryOp\NotEqual || $compares[0] instanceof Expr\BinaryOp\NotIdentical)) {
            return 'the comparison of the lock\'s value with the id was not found';
        }
        $compare = $compares[0];
        [$get, $id] = $this->isGet($compare->left) ? [$compare->left, $compare->right] : [$compare->right, $compare->left];
        $key = $this->orderKey($get->args[0]->value ?? null, $method);
        if (is_string($key)) {
            return $key;
        }
        $dels = $finder->find($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n) && in_array(strtolower($n->name->toString()), ['del', 'delete', 'unlink'], true));
        if ($dels === []) {
            return 'no DEL of the order\'s key was found';
        }
        $released = '$redislockReleased';
        $call = "($released = {$this->orders}releaseLock(" . Php::code($key[1]) . ', ' . Php::code($id) . '))';
        $negated = $compare instanceof Expr\BinaryOp\NotEqual || $compare instanceof Expr\BinaryOp\NotIdentical;
        $this->replace($method, $compare, Php::expression($negated ? "!$call" : $call));
        // A WATCH, MULTI, DEL and EXEC whose replies nothing reads go; a DEL whose reply is read
        // answers how many keys it deleted.
        $this->dropCalls($method, ['watch', 'unwatch', 'multi', 'exec', 'discard', 'del', 'delete', 'unlink']);
        foreach ($finder->find($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n)
            && in_array(strtolower($n->name->toString()), ['del', 'delete', 'unlink'], true)) as $del) {
            $parent = $del->getAttribute('parent');
            if ($parent instanceof Expr\MethodCall) {
                return 'line ' . $del->getStartLine() . ': the reply of its MULTI is read, which the doctor cannot map';
            }
            $this->replace($method, $del, Php::expression($parent instanceof Expr\Cast\Bool_ ? $released : "(int) $released"));
        }
        $this->dropCalls($method, ['watch', 'unwatch', 'multi', 'exec', 'discard']);
        return null;
    }

    /** @param list<Expr\MethodCall> $evals */
    private function releaseByScript(Stmt\ClassMethod $method, array $evals): ?string
    {
        if (count($evals) !== 1) {
            return 'it runs more than one script';
        }
        $eval = $evals[0];
        $script = $this->scriptText($eval->args[0]->value ?? null, $method);
        if ($script === null || stripos($script, 'get') === false || stripos($script, 'del') === false) {
            return 'its script is not a compare-and-delete the doctor can read';
        }
        // phpredis: eval($script, [$key, $id], 1); Predis: eval($script, 1, $key, $id).
        $args = array_map(fn ($a) => $a->value, array_slice($eval->args, 1));
        if (($args[0] ?? null) instanceof Expr\Array_ && count($args[0]->items) === 2) {
            [$keyExpr, $id] = [$args[0]->items[0]->value, $args[0]->items[1]->value];
        } elseif (count($args) === 3) {
            [$keyExpr, $id] = [$args[1], $args[2]];
        } else {
            return 'the script\'s key and id were not found';
        }
        $key = $this->orderKey($keyExpr, $method);
        if (is_string($key)) {
            return $key;
        }
        $this->replace($method, $eval, Php::expression("(int) {$this->orders}releaseLock(" . Php::code($key[1]) . ', ' . Php::code($id) . ')'));
        return null;
    }

    /** generateUniqueLockId(): the INCR becomes the extension's. */
    private function nextId(Stmt\ClassMethod $method): ?string
    {
        $incrs = (new NodeFinder())->find($method->stmts, fn (Node $n) => $this->isCounterCall($n));
        if (count($incrs) !== 1) {
            return 'the INCR of the id counter was not found';
        }
        if (is_string($why = $this->counterKey($incrs[0]))) {
            return $why;
        }
        $this->replace($method, $incrs[0], Php::expression("{$this->orders}generateUniqueLockId()"));
        return null;
    }

    private function isCounterCall(Node $n): bool
    {
        return $this->protocol->isRedisCall($n) && in_array(strtolower($n->name->toString()), ['incr', 'incrby'], true);
    }

    private function isIdMethodCall(Node $n): bool
    {
        return isset($this->roles['generateUniqueLockId']) && $this->protocol->ownMethod($n) === $this->roles['generateUniqueLockId'];
    }

    /** Null when the INCR (or the copy's id method) counts in the copy's counter (layout()), else why not. */
    private function counterKey(Expr $source): ?string
    {
        if ($this->isIdMethodCall($source)) {
            return null; // (Its INCR is checked as that method's.)
        }
        $arg = $source->args[0]->value ?? null;
        return $arg !== null && Php::code($arg) === $this->layout()['counter'] ? null
            : 'it counts in another counter (' . ($arg === null ? 'none' : Php::code($arg)) . ') than addLock() does';
    }

    /** @return array{string, Expr}|string the order key's template (as code) and the order id, or why it is not addLock()'s */
    private function orderKey(?Expr $expr, Stmt\ClassMethod $method): array|string
    {
        $template = $expr === null ? null : $this->protocol->template($expr, $method);
        if ($template === null) {
            return 'its order key (' . ($expr === null ? 'none' : $this->protocol->shown($expr)) . ') is not one the doctor can read';
        }
        if ($template[0] !== $this->layout()['template']) {
            return "its order key ({$template[0]}) is not addLock()'s ({$this->layout()['template']})";
        }
        return [$template[0], $template[1]];
    }

    /** Whether every variable of the order id and the lease is a parameter, or set before the statement at `$at`. */
    private function before(Node $at, Expr $order, Expr $ttl, Stmt\ClassMethod $method): bool
    {
        $params = array_map(fn ($p) => $p->var->name, $method->params);
        foreach ((new NodeFinder())->findInstanceOf([$order, $ttl], Expr\Variable::class) as $var) {
            if (!is_string($var->name) || in_array($var->name, $params, true) || $var->name === 'this') {
                continue;
            }
            $set = (new NodeFinder())->findFirst($method->stmts, fn (Node $n) => $n instanceof Expr\Assign
                && $n->var instanceof Expr\Variable && $n->var->name === $var->name);
            if ($set === null || $set->getStartFilePos() >= $at->getStartFilePos()) {
                return false;
            }
        }
        return true;
    }

    /** The text of a script: a literal, a constant, or a local variable set once to one. */
    private function scriptText(?Expr $expr, Stmt\ClassMethod $method): ?string
    {
        $key = $expr === null ? null : $this->protocol->key($expr, $method);
        return $key !== null && $key[1] === null ? $key[0] : null;
    }
}
