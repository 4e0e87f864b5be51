<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use PhpParser\Node;
use PhpParser\Node\Expr;
use PhpParser\Node\Stmt;
use PhpParser\NodeFinder;
use PhpParser\NodeTraverser;
use PhpParser\NodeVisitorAbstract;

/**
 * A copy's class rewritten in its file's syntax tree so that the methods
 * doing an original's work (its roles) send no Redis command of their own:
 * the extension's class does that. Only the protocol goes (the Redis
 * calls, their connection and keys, the wait loop); every other statement,
 * the signature and the return expressions stay, fed with the extension's
 * result. `apply()` says why where it cannot show that a method keeps its
 * contract: then the caller leaves the file as it was.
 */
final class Rewrite
{
    /** The comment a rewritten method starts with (and how a second run knows it). */
    public const MARK = "redislock doctor: the extension's";

    /** What the rewritten methods call, for the report: the extension's class, or the copy's OrderLocks. */
    public function target(): string
    {
        return $this->orders !== '' && !str_starts_with($this->orders, '\\') ? 'RedisLock\\OrderLocks on its own keys and connection'
            : substr($this->ext, strlen('\\RedisLock\\DropIn\\'));
    }

    /** Whether the extension's object takes the connection the copy's constructor makes (no INI line needed for it). */
    public bool $handedOver = false;

    private Protocol $protocol;
    private string $ext;

    /**
     * @param array $class the copy's facts (Php::classes()), its `node` in the file's tree
     * @param array<string, string> $roles original's method => the copy's
     */
    public function __construct(private array $class, private string $original, private array $roles)
    {
        $this->protocol = new Protocol($class, array_values($roles), $original);
        // (Its name whatever the app declares: a copy may hold the global one.)
        $this->ext = '\\RedisLock\\DropIn\\' . $original;
    }

    /**
     * Why a method would lose more than its protocol if it were replaced
     * whole (null: nothing would be lost), by the copy's method name.
     *
     * @return array<string, string>
     */
    public function beyondProtocol(): array
    {
        $out = [];
        foreach ($this->roles as $mine) {
            $why = $this->protocol->beyond($mine);
            if ($why !== null) {
                $out[$mine] = $why;
            }
        }
        return $out;
    }

    /**
     * Why the copy's keys cannot be kept (each a line; none when they
     * can): a `RedisLock` or `RedisQueue` copy's keys must be the
     * original's, which the extension's classes write (else a swap would
     * move its locks or tasks, and during a rolling deploy old and new
     * processes would not exclude each other); a `Lock_Service` copy's are
     * kept whatever they are (`Client::orderLocks()`), when the doctor can
     * read them.
     *
     * @return list<string>
     */
    public function keyProblems(): array
    {
        $why = [];
        if ($this->original === 'Lock_Service') {
            $layout = $this->layout();
            return is_string($layout) ? [$layout] : [];
        }
        $prefix = $this->original === 'RedisLock' ? 'Lock:' : 'Queue:';
        $own = [];
        foreach ($this->roles as $mine) {
            $own = [...$own, ...array_diff($this->keysOf($mine), [$prefix])];
        }
        if ($own !== []) {
            $why[] = 'its keys are its own (' . implode(', ', array_map(fn ($k) => "'$k...'", array_unique($own))) . "), not the original's $prefix<name>:"
                . ' the extension\'s are ' . $prefix . '<name>, so during a rolling deploy old and new processes would not see each other\'s '
                . ($this->original === 'RedisLock' ? 'locks' : 'tasks');
        }
        return $why;
    }

    /**
     * Rewrites the class in place; returns why it cannot (each a line for
     * a human), an empty list when it did.
     *
     * @return list<string>
     */
    public function apply(): array
    {
        $why = $this->original === 'Lock_Service' ? $this->orderLocks() : $this->delegates();
        return $why;
    }

    // ---- Lock_Service: statement by statement ---------------------------------------------------------------

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
            if ($said === null) {
                // The connection its calls went through, set up here, goes with them.
                $this->dropCalls($method, ['connect', 'pconnect', 'auth', 'select', 'setoption']);
                $this->dropDeadLocals($method);
                $left = (new NodeFinder())->findFirst($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n));
                $said = $left === null ? null : "line {$left->getStartLine()}: " . Php::code($left) . ' is Redis work the doctor cannot map onto the extension\'s ' . $theirs . '()';
            }
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

    private function isGet(Node $n): bool
    {
        return $this->protocol->isRedisCall($n) && strtolower($n->name->toString()) === 'get';
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

    /** The SET's lease in seconds: `['ex' => $t]`, `'EX', $t`, PX as ms, or the EXPIRE after a SETNX. */
    private function ttlOf(Expr\MethodCall $set, Stmt\ClassMethod $method): ?Expr
    {
        $args = array_map(fn ($a) => $a->value, array_slice($set->args, 2));
        foreach ($args as $i => $arg) {
            if ($arg instanceof Expr\Array_) {
                foreach ($arg->items as $item) {
                    $unit = $item?->key === null ? null : strtolower((string) $this->protocol->text($item->key));
                    if ($unit === 'ex' || $unit === 'px') {
                        return $unit === 'ex' ? $item->value : new Expr\BinaryOp\Div($item->value, new Node\Scalar\LNumber(1000));
                    }
                }
            }
            $unit = strtolower((string) $this->protocol->text($arg));
            if (($unit === 'ex' || $unit === 'px') && isset($args[$i + 1])) {
                return $unit === 'ex' ? $args[$i + 1] : new Expr\BinaryOp\Div($args[$i + 1], new Node\Scalar\LNumber(1000));
            }
        }
        $expire = (new NodeFinder())->findFirst($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n)
            && in_array(strtolower($n->name->toString()), ['expire', 'pexpire'], true));
        if ($expire !== null && isset($expire->args[1])) {
            return strtolower($expire->name->toString()) === 'expire' ? $expire->args[1]->value
                : new Expr\BinaryOp\Div($expire->args[1]->value, new Node\Scalar\LNumber(1000));
        }
        return null;
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

    // ---- RedisLock and RedisQueue: methods that are the protocol alone call the extension's object ------------

    /** @return list<string> */
    private function delegates(): array
    {
        $why = [];
        $beyond = $this->beyondProtocol();
        $renamed = array_filter($this->roles, fn ($mine, $theirs) => strcasecmp($mine, $theirs) !== 0, ARRAY_FILTER_USE_BOTH) !== [];
        if (($beyond !== [] || $renamed) && $this->original === 'RedisLock' && $this->keyProblems() === []) {
            // Statements of its own beside the protocol: each Redis call is
            // replaced where it stands, in every role method alike (one
            // method's record kept and another's dropped would not agree).
            return $this->lockCalls();
        }
        foreach ($beyond as $mine => $what) {
            $why[] = "$mine() does more than Redis work ($what): the doctor cannot yet keep that beside the extension's "
                . array_search($mine, $this->roles, true) . '(), and a whole rewrite would lose it';
        }
        foreach ($this->roles as $mine) {
            if ($this->class['does'][$mine]['node']->stmts === null) {
                $why[] = "$mine() has no body";
            }
        }
        $why = [...$this->keyProblems(), ...$why];
        if (($container = $this->containerConnection($this->connectionProperty())) !== null) {
            $why[] = $container;
        }
        if ($why !== []) {
            return array_values(array_unique($why));
        }
        $static = false;
        $connection = $this->connectionProperty();
        foreach ($this->roles as $theirs => $mine) {
            $d = $this->class['does'][$mine];
            $static = $static || $d['static'];
            $params = array_keys($this->class['methods'][$mine]);
            $wanted = count(Classifier::ORIGINALS[$this->original][$theirs]);
            $args = implode(', ', array_map(fn ($p) => "\$$p", array_slice($params, 0, $wanted)));
            $target = ($d['static'] ? 'self::' : '$this->') . "redislockDelegate()->$theirs($args)";
            $boolish = $d['returns'] !== [] && array_filter($d['returns'], fn ($r) => !Classifier::boolish($r)) === [];
            $body = $theirs === 'isLocking' && $boolish ? "return (bool) $target;" : "return $target;";
            $this->setBody($d['node'], [self::mark("{$this->ext}::$theirs() does this."), ...Php::statements($body)]);
        }
        $this->addDelegate($static, $connection);
        return [];
    }

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
            if ($said === null) {
                $this->dropCalls($method, ['expire', 'pexpire', 'watch', 'unwatch', 'multi', 'exec']);
                $this->dropDeadLocals($method);
                $left = (new NodeFinder())->findFirst($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n));
                $said = $left === null ? null : "line {$left->getStartLine()}: " . Php::code($left) . ' is Redis work the doctor cannot map onto the extension\'s ' . $theirs . '()';
            }
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

    /** A method's new body; a method written on one line is printed anew (a comment in one line would end it). */
    private function setBody(Stmt\ClassMethod $method, array $stmts): void
    {
        if ($method->getStartLine() !== $method->getEndLine()) {
            $method->stmts = $stmts;
            return;
        }
        $new = new Stmt\ClassMethod($method->name->toString(), ['flags' => $method->flags, 'byRef' => $method->byRef,
            'params' => $method->params, 'returnType' => $method->returnType, 'stmts' => $stmts, 'attrGroups' => $method->attrGroups],
            ['comments' => $method->getComments()]);
        foreach ($this->class['node']->stmts as $i => $stmt) {
            if ($stmt === $method) {
                $this->class['node']->stmts[$i] = $new;
            }
        }
    }

    /** The constant starts of the keys a method's Redis calls name (their first argument). */
    private function keysOf(string $mine): array
    {
        $method = $this->class['does'][$mine]['node'];
        $keys = [];
        foreach ((new NodeFinder())->find($method->stmts ?? [], fn (Node $n) => $this->protocol->isRedisCall($n)) as $call) {
            $name = strtolower($call->name->toString());
            if (in_array($name, ['connect', 'pconnect', 'auth', 'select', 'multi', 'exec', 'discard', 'unwatch', 'eval', 'evalsha', 'lock', 'unlock'], true)
                || !isset($call->args[0])) {
                continue;
            }
            $key = $this->protocol->key($call->args[0]->value, $method);
            if ($key !== null && $key[1] !== null) {
                $keys[] = $key[0];
            }
        }
        return array_unique($keys);
    }

    /**
     * The extension's object the methods call: one per object, made with
     * the connection the copy's constructor takes or makes (a factory's,
     * a framework's, an injected one), or its constructor's parameter.
     */
    private function addDelegate(bool $static, ?string $connection): void
    {
        $node = $this->class['node'];
        $ext = $this->ext;
        $ctor = null;
        foreach ($node->getMethods() as $m) {
            if (strcasecmp($m->name->toString(), '__construct') === 0) {
                $ctor = $m;
            }
        }
        $made = 'new ' . $ext . '()';
        $self = $static ? 'self::$' : '$this->';
        if ($connection !== null) {
            // The connection the copy's Redis calls went through, however it came (made, a factory's, a
            // framework's, injected): its server, database, credentials and prefix. (A framework's
            // connection object hands out its client.)
            $this->handedOver = true;
            $made = "new $ext(\$c === null || \$c instanceof \\Redis || !method_exists(\$c, 'client') ? \$c : \$c->client())";
            $made = "{ \$c = {$self}$connection ?? null; return {$self}redislockDelegate ??= $made; }";
        } elseif (!$static && $ctor !== null && $ctor->stmts !== null && $ctor->params !== []) {
            array_unshift($ctor->stmts, ...Php::statements("\$this->redislockDelegate = new $ext(\${$ctor->params[0]->var->name});"));
        }
        $made = str_starts_with($made, '{') ? $made : "{ return {$self}redislockDelegate ??= $made; }";
        $property = ($static ? 'private static ' : 'private ') . "?$ext \$redislockDelegate = null;";
        $accessor = ($static ? 'private static' : 'private') . " function redislockDelegate(): $ext $made";
        $members = Php::statements("class X { $property $accessor }")[0]->stmts;
        $members[0]->setAttribute('comments', [new \PhpParser\Comment("// redislock doctor: the extension's {$this->original} these methods call.")]);
        array_push($node->stmts, ...$members);
    }

    /**
     * Why the connection in property `$connection` cannot be handed to the
     * extension, or null: one from a dependency container (Hyperf's
     * `make(Redis::class)`, `app('redis')`) is a proxy, neither a phpredis
     * `\Redis` nor a Predis client, and the extension would refuse it at
     * its first use.
     */
    private function containerConnection(?string $connection): ?string
    {
        if ($connection === null) {
            return null;
        }
        foreach ($this->class['does'] as $d) {
            foreach ((new NodeFinder())->find($d['node']->stmts ?? [], fn (Node $n) => $n instanceof Expr\Assign
                && Protocol::property($n->var) === $connection) as $set) {
                $e = $set->expr;
                $unwrapped = $e instanceof Expr\MethodCall && $e->name instanceof Node\Identifier
                    && in_array(strtolower($e->name->toString()), ['connection', 'client', 'handler'], true);
                $container = (new NodeFinder())->findFirst([$e], fn (Node $n) => ($n instanceof Expr\FuncCall && $n->name instanceof Node\Name
                    && in_array(strtolower($n->name->getLast()), ['make', 'app', 'resolve', 'di', 'container'], true))
                    || ($n instanceof Expr\MethodCall && $n->name instanceof Node\Identifier && strtolower($n->name->toString()) === 'getcontainer')
                    || ($n instanceof Expr\StaticCall && $n->name instanceof Node\Identifier && strtolower($n->name->toString()) === 'getcontainer'));
                if ($container !== null && !$unwrapped) {
                    return 'its connection (' . Php::code($e) . ') comes from a container, an object the extension cannot take (a phpredis \\Redis'
                        . ' or a Predis client): give it the client (->client(), ->connection()) or the server in redislock.default_dsn by hand';
                }
            }
        }
        return null;
    }

    /**
     * Whether the copy's Redis calls go through a connection it makes or
     * is given itself (a property it sets, a promoted constructor
     * parameter): the extension's class alone would connect by php.ini
     * instead, so a rewrite hands that connection over.
     */
    public function ownConnection(): bool
    {
        $connection = $this->original === 'Lock_Service' ? null : $this->connectionProperty();
        if ($connection === null) {
            return false;
        }
        foreach ($this->class['node']->getMethods() as $m) {
            $promoted = strcasecmp($m->name->toString(), '__construct') === 0
                && array_filter($m->params, fn ($p) => $p->flags !== 0 && $p->var instanceof Expr\Variable && $p->var->name === $connection) !== [];
            $set = (new NodeFinder())->findFirst($m->stmts ?? [], fn (Node $n) => $n instanceof Expr\Assign && Protocol::property($n->var) === $connection);
            if ($promoted || $set !== null) {
                return true;
            }
        }
        return false;
    }

    /** The property the copy's Redis calls go through (`$this->redis`), or null. */
    private function connectionProperty(): ?string
    {
        foreach ($this->roles as $mine) {
            foreach ((new NodeFinder())->find($this->class['does'][$mine]['node']->stmts ?? [], fn (Node $n) => $this->protocol->isRedisCall($n)) as $call) {
                $receiver = $call->var;
                while ($receiver instanceof Expr\MethodCall) {
                    $receiver = $receiver->var;
                }
                if (($p = Protocol::property($receiver)) !== null) {
                    return $p;
                }
            }
        }
        return null;
    }

    // ---- edits ------------------------------------------------------------------------------------------------

    /** The comment a rewritten method starts with: MARK, and what does its Redis work (`$what`, its namespace left out). */
    private static function mark(string $what): Stmt\Nop
    {
        return new Stmt\Nop(['comments' => [new \PhpParser\Comment('// ' . self::MARK . ' ' . preg_replace('/^\\\\RedisLock\\\\(DropIn\\\\)?/', '', $what))]]);
    }

    /** Replaces the node `$old` (found by identity) with `$new` (a statement with statements) in the method. */
    private function replace(Stmt\ClassMethod $method, Node $old, Node|array $new): void
    {
        $traverser = new NodeTraverser();
        $traverser->addVisitor(new class ($old, $new) extends NodeVisitorAbstract {
            public function __construct(private Node $old, private Node|array $new)
            {
            }

            public function leaveNode(Node $node)
            {
                return $node === $this->old ? $this->new : null;
            }
        });
        $method->stmts = $traverser->traverse($method->stmts);
    }

    /** Drops the statements that are only a call of these commands (a chain of them too), and ifs left empty by that. */
    private function dropCalls(Stmt\ClassMethod $method, array $commands): void
    {
        $protocol = $this->protocol;
        $only = function (Expr $e) use (&$only, $protocol, $commands): bool {
            if ($e instanceof Expr\Cast\Int_ || $e instanceof Expr\Cast\Bool_) {
                return $only($e->expr);
            }
            if (!$protocol->isRedisCall($e) || !in_array(strtolower($e->name->toString()), $commands, true)) {
                return false;
            }
            return !$e->var instanceof Expr\MethodCall || $only($e->var) || !$protocol->isRedisCall($e->var);
        };
        $this->dropStatements($method, fn (Stmt $s) => $s instanceof Stmt\Expression && $only($s->expr));
    }

    /** Local variables set to a connection, a key or a script that nothing reads any more: their statements go. */
    private function dropDeadLocals(Stmt\ClassMethod $method): void
    {
        for ($round = 0; $round < 4; $round++) {
            $reads = [];
            foreach ((new NodeFinder())->findInstanceOf($method->stmts, Expr\Variable::class) as $var) {
                $parent = $var->getAttribute('parent');
                if (is_string($var->name) && !($parent instanceof Expr\Assign && $parent->var === $var)) {
                    $reads[$var->name] = true;
                }
            }
            $before = count((new NodeFinder())->findInstanceOf($method->stmts, Stmt::class));
            $this->dropStatements($method, fn (Stmt $s) => $s instanceof Stmt\Expression && $s->expr instanceof Expr\Assign
                && $s->expr->var instanceof Expr\Variable && is_string($s->expr->var->name) && !isset($reads[$s->expr->var->name])
                && $this->isProtocolValue($s->expr->expr, $method));
            if (count((new NodeFinder())->findInstanceOf($method->stmts, Stmt::class)) === $before) {
                return;
            }
        }
    }

    /** A connection, a key, a script or a clock: a value only the protocol used. */
    private function isProtocolValue(Expr $e, Stmt\ClassMethod $method): bool
    {
        if (($own = $this->protocol->ownMethod($e)) !== null) {
            return $this->protocol->isConnectionMethod($own);
        }
        return $this->protocol->key($e, $method) !== null || $this->protocol->template($e, $method) !== null
            || Protocol::isConnectionCall($e) || $e instanceof Expr\PropertyFetch
            || ($e instanceof Expr\New_ && $e->class instanceof Node\Name && in_array(strtolower($e->class->getLast()), ['redis', 'client'], true))
            || ($e instanceof Expr\FuncCall && $e->name instanceof Node\Name && in_array(strtolower($e->name->toString()), ['time', 'microtime'], true));
    }

    private function dropStatements(Stmt\ClassMethod $method, callable $drop): void
    {
        $traverser = new NodeTraverser();
        $traverser->addVisitor(new class ($drop) extends NodeVisitorAbstract {
            public function __construct(private $drop)
            {
            }

            public function leaveNode(Node $node)
            {
                if ($node instanceof Stmt && ($this->drop)($node)) {
                    return NodeTraverser::REMOVE_NODE;
                }
                if ($node instanceof Stmt\If_ && $node->stmts === [] && $node->else === null && $node->elseifs === []
                    && $node->cond instanceof Expr\Variable) {
                    return NodeTraverser::REMOVE_NODE;
                }
                return null;
            }
        });
        $method->stmts = $traverser->traverse($method->stmts);
    }
}
