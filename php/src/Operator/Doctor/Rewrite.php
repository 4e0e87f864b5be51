<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use PhpParser\Node;
use PhpParser\Node\Expr;
use PhpParser\Node\Stmt;
use PhpParser\NodeFinder;

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
    use OrderLockCalls;
    use LockCalls;
    use TreeEdits;

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
     * whole, by the copy's method name (none: nothing would be lost).
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
        return $this->original === 'Lock_Service' ? $this->orderLocks() : $this->delegates();
    }

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

    /** Whether `$n` is a GET. */
    private function isGet(Node $n): bool
    {
        return $this->protocol->isRedisCall($n) && strtolower($n->name->toString()) === 'get';
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
}
