<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use PhpParser\Node;
use PhpParser\Node\Expr;
use PhpParser\Node\Scalar;
use PhpParser\Node\Stmt;
use PhpParser\NodeFinder;

/**
 * What in a copy's method is the Redis protocol: the calls to Redis, the
 * connection they go through, the keys they name and the local values
 * only they use. Everything else in a method is the copy's own (a log
 * line, a return wrapper, a record the app reads), which a rewrite keeps.
 */
final class Protocol
{
    /** The Redis commands the originals and their copies send. */
    public const COMMANDS = ['set', 'setnx', 'setex', 'psetex', 'get', 'getset', 'del', 'delete', 'unlink', 'expire', 'pexpire',
        'expireat', 'ttl', 'pttl', 'exists', 'incr', 'incrby', 'watch', 'unwatch', 'multi', 'exec', 'discard', 'eval', 'evalsha',
        'zadd', 'zscore', 'zrem', 'zrange', 'zrangebyscore', 'zrevrangebyscore', 'zcard', 'zcount', 'connect', 'pconnect', 'auth',
        'select', 'rawcommand', 'executeraw', 'command'];

    /** The functions protocol code calls besides Redis: clocks, waits, formatting, PHP's own checks. */
    public const FUNCTIONS = ['time', 'microtime', 'hrtime', 'usleep', 'sleep', 'sprintf', 'max', 'min', 'intval', 'floatval', 'strval',
        'boolval', 'count', 'array_keys', 'array_values', 'in_array', 'key_exists', 'array_key_exists', 'implode', 'explode', 'round',
        'floor', 'ceil', 'abs', 'is_array', 'is_null', 'is_numeric', 'is_int', 'is_string', 'is_bool', 'is_object', 'array_map',
        'array_filter', 'array_slice', 'array_merge', 'array_unique', 'uniqid', 'md5', 'sha1', 'bin2hex', 'random_bytes', 'mt_rand',
        'rand', 'number_format', 'str_replace', 'strlen', 'trim', 'strtolower', 'compact', 'method_exists'];

    /**
     * @param array $class the copy's facts (Php::classes())
     * @param list<string> $roles the copy's methods that do the original's work
     */
    public function __construct(private array $class, private array $roles, private string $original)
    {
    }

    /** Whether `$node` is a call to Redis: a command on anything but the copy itself. */
    public function isRedisCall(Node $node): bool
    {
        if (!($node instanceof Expr\MethodCall || $node instanceof Expr\NullsafeMethodCall) || !$node->name instanceof Node\Identifier) {
            return false;
        }
        $name = strtolower($node->name->toString());
        $commands = $this->original === 'RedisQueue' ? [...self::COMMANDS, 'lock', 'unlock'] : self::COMMANDS;
        // (Not the extension's object a rewrite calls: `$this->redislockDelegate()->expire()`.)
        $ours = ($node->var instanceof Expr\MethodCall || $node->var instanceof Expr\StaticCall) && $node->var->name instanceof Node\Identifier
            && str_starts_with($node->var->name->toString(), 'redislock');
        return in_array($name, $commands, true) && !self::isSelf($node->var) && !$ours;
    }

    /** `$this`, `self`, `static`: the copy itself. */
    public static function isSelf(Node $node): bool
    {
        return ($node instanceof Expr\Variable && $node->name === 'this')
            || ($node instanceof Node\Name && in_array(strtolower($node->toString()), ['self', 'static'], true));
    }

    /** The method of the copy a call names (`$this->x()`, `self::x()`), or null. */
    public function ownMethod(Node $node): ?string
    {
        if (($node instanceof Expr\MethodCall || $node instanceof Expr\StaticCall) && $node->name instanceof Node\Identifier
            && self::isSelf($node instanceof Expr\MethodCall ? $node->var : $node->class)) {
            foreach (array_keys($this->class['methods']) as $m) {
                if (strcasecmp($m, $node->name->toString()) === 0) {
                    return $m;
                }
            }
        }
        return null;
    }

    /** Whether the copy's method `$m` hands out a connection: it makes one, or returns a property or a factory's. */
    public function isConnectionMethod(string $m): bool
    {
        $d = $this->class['does'][$m] ?? null;
        if ($d === null || in_array($m, $this->roles, true)) {
            return false;
        }
        $calls = $d['calls'];
        return array_intersect(['connect', 'pconnect', 'get', 'connection', 'client', 'make', 'handler', 'getinstance'], $calls) !== []
            || (new NodeFinder())->findFirst($d['node']->stmts ?? [], fn (Node $n) => $n instanceof Expr\New_
                && $n->class instanceof Node\Name && in_array(strtolower($n->class->getLast()), ['redis', 'client'], true)) !== null
            || (count($d['node']->stmts ?? []) === 1 && ($d['node']->stmts[0] ?? null) instanceof Stmt\Return_
                && $d['node']->stmts[0]->expr instanceof Expr\PropertyFetch);
    }

    /** The property name a `$this->x` / `self::$x` fetch names, or null. */
    public static function property(Node $node): ?string
    {
        if ($node instanceof Expr\PropertyFetch && self::isSelf($node->var) && $node->name instanceof Node\Identifier) {
            return $node->name->toString();
        }
        if ($node instanceof Expr\StaticPropertyFetch && self::isSelf($node->class) && $node->name instanceof Node\VarLikeIdentifier) {
            return $node->name->toString();
        }
        return null;
    }

    /**
     * The properties the copy's protocol keeps for itself (which locks it
     * holds, its connection): those only its role methods and its
     * constructor touch, and that are not public.
     *
     * @return list<string>
     */
    public function ownRecords(): array
    {
        $touched = [];
        foreach ($this->class['does'] as $m => $d) {
            $inside = in_array($m, $this->roles, true) || strcasecmp($m, '__construct') === 0 || $this->isConnectionMethod($m);
            foreach ((new NodeFinder())->find($d['node']->stmts ?? [], fn (Node $n) => self::property($n) !== null) as $fetch) {
                $touched[self::property($fetch)][] = $inside;
            }
        }
        $records = [];
        foreach ($touched as $name => $where) {
            if (!in_array(false, $where, true) && !($this->class['properties'][$name] ?? false)) {
                $records[] = $name;
            }
        }
        return $records;
    }

    /**
     * Why method `$m` is more than the protocol (the first statement that
     * is the copy's own, with its line), or null when all of it is: calls
     * to Redis, to its connection and to its other role methods, its own
     * records, clocks and waits, and the local values and returns of those.
     */
    public function beyond(string $m): ?string
    {
        $records = $this->ownRecords();
        $node = $this->class['does'][$m]['node'];
        foreach ((new NodeFinder())->find($node->stmts ?? [], fn (Node $n) => true) as $n) {
            $why = match (true) {
                $n instanceof Expr\FuncCall => $n->name instanceof Node\Name && in_array(strtolower($n->name->toString()), self::FUNCTIONS, true)
                    ? null : 'it calls ' . Php::code($n->name) . '()',
                $n instanceof Expr\MethodCall || $n instanceof Expr\NullsafeMethodCall || $n instanceof Expr\StaticCall
                    => $this->isRedisCall($n) || (($own = $this->ownMethod($n)) !== null && (in_array($own, $this->roles, true) || $this->isConnectionMethod($own)))
                        || self::isConnectionCall($n) ? null : 'it calls ' . Php::code($n),
                $n instanceof Expr\New_ => $n->class instanceof Node\Name && in_array(strtolower($n->class->getLast()), ['redis', 'client'], true)
                    ? null : 'it makes ' . Php::code($n),
                $n instanceof Expr\PropertyFetch || $n instanceof Expr\StaticPropertyFetch
                    => self::property($n) === null || in_array(self::property($n), $records, true) ? null
                        : 'it uses ' . Php::code($n) . ', which the app reads elsewhere',
                $n instanceof Stmt\Echo_ || $n instanceof Expr\Print_ || $n instanceof Expr\Exit_ || $n instanceof Stmt\InlineHTML => 'it prints or exits',
                $n instanceof Expr\Throw_ || $n instanceof Stmt\Throw_ => 'it throws',
                $n instanceof Expr\Include_ || $n instanceof Expr\Eval_ || $n instanceof Stmt\Global_ || $n instanceof Stmt\Static_
                    || $n instanceof Expr\Closure || $n instanceof Expr\ArrowFunction || $n instanceof Expr\Yield_ => 'it holds ' . Php::code($n),
                default => null,
            };
            if ($why !== null) {
                return "line {$n->getStartLine()}: $why";
            }
        }
        return null;
    }

    /** A static call to a connection factory (`RedisFactory::get()`, a framework's `Redis::connection()`). */
    public static function isConnectionCall(Node $n): bool
    {
        return $n instanceof Expr\StaticCall && $n->name instanceof Node\Identifier && $n->class instanceof Node\Name
            && (stripos($n->class->toString(), 'redis') !== false || stripos($n->class->toString(), 'cache') !== false)
            && in_array(strtolower($n->name->toString()), ['get', 'connection', 'store', 'getinstance', 'instance', 'client'], true);
    }

    /**
     * A key as the copy builds it, split into its constant start and the
     * part the call gives (the order id, the lock's name), from what
     * template() reads; or a constant text and null. Null when it is built
     * otherwise.
     *
     * @return array{string, ?Expr}|null
     */
    public function key(Expr $expr, ?Stmt\ClassMethod $method): ?array
    {
        $expr = $this->resolved($expr, $method);
        $text = $this->text($expr);
        if ($text !== null) {
            return [$text, null];
        }
        $template = $this->template($expr, $method);
        return $template !== null && $template[2] !== null && str_ends_with($template[2], '%s')
            ? [substr($template[2], 0, -2), $template[1]] : null;
    }

    /** What a local variable was set to, when it was set once in `$method` (followed a few times); else `$expr`. */
    private function resolved(Expr $expr, ?Stmt\ClassMethod $method): Expr
    {
        for ($depth = 0; $depth < 4 && $expr instanceof Expr\Variable && is_string($expr->name) && $method !== null; $depth++) {
            $sets = (new NodeFinder())->find($method->stmts ?? [], fn (Node $n) => $n instanceof Expr\Assign
                && $n->var instanceof Expr\Variable && $n->var->name === $expr->name);
            if (count($sets) !== 1) {
                break;
            }
            $expr = $sets[0]->expr;
        }
        return $expr;
    }

    /** An expression as code, with the code of the copy's constants it names (`self::KEY = APP_ENV . '_lock_%s'`). */
    public function shown(Expr $expr): string
    {
        $code = Php::code($expr);
        foreach ((new NodeFinder())->findInstanceOf([$expr], Expr\ClassConstFetch::class) as $fetch) {
            $value = $fetch->name instanceof Node\Identifier ? ($this->class['constants'][$fetch->name->toString()] ?? null) : null;
            if (self::isSelf($fetch->class) && is_array($value)) {
                $code .= ", with {$fetch->name} = {$value['code']}";
            }
        }
        return $code;
    }

    /**
     * An order key as a template and the order id it is filled with: the
     * template as PHP code (the copy's own expression where it names one,
     * `self::KEY`, so `APP_ENV . '_lock_%s'` is evaluated as it was), the
     * order id's expression, and the template's text where the doctor can
     * tell it (null: known only when the code runs). From `sprintf(TPL, $id)`,
     * `"lock_{$id}:x"`, `PREFIX . $id [. SUFFIX]`, or a local variable set
     * once to one of those in `$method`. Null when it is built otherwise.
     *
     * @return array{string, Expr, ?string}|null
     */
    public function template(Expr $expr, ?Stmt\ClassMethod $method): ?array
    {
        $expr = $this->resolved($expr, $method);
        $fixed = fn (Expr $e) => (new NodeFinder())->findFirst([$e], fn (Node $n) => $n instanceof Expr\Variable
            || $n instanceof Expr\FuncCall || $n instanceof Expr\MethodCall || $n instanceof Expr\StaticCall) === null;
        // (A text with another `%` is no template the extension takes: not read.)
        $one = fn (?string $text) => $text === null || substr_count($text, '%') === 1;
        $found = null;
        if ($expr instanceof Expr\FuncCall && $expr->name instanceof Node\Name && strtolower($expr->name->toString()) === 'sprintf'
            && count($expr->args) === 2 && $fixed($expr->args[0]->value)) {
            $found = [Php::code($expr->args[0]->value), $expr->args[1]->value, $this->text($expr->args[0]->value)];
        } elseif ($expr instanceof Scalar\Encapsed) {
            $orders = array_keys(array_filter($expr->parts, fn ($p) => !$p instanceof Scalar\EncapsedStringPart));
            if (count($orders) === 1) {
                $text = implode('', array_map(fn ($p, $i) => $i === $orders[0] ? '%s' : $p->value, $expr->parts, array_keys($expr->parts)));
                $found = [var_export($text, true), $expr->parts[$orders[0]], $text];
            }
        } elseif ($expr instanceof Expr\BinaryOp\Concat) {
            // (`A . $id . B` is `(A . $id) . B`.)
            [$start, $order, $end] = $expr->left instanceof Expr\BinaryOp\Concat && $fixed($expr->right)
                ? [$expr->left->left, $expr->left->right, $expr->right] : [$expr->left, $expr->right, null];
            if ($fixed($start) && ($end === null || $fixed($end))) {
                [$before, $after] = [$this->text($start), $end === null ? '' : $this->text($end)];
                $found = [Php::code($start) . " . '%s'" . ($end === null ? '' : ' . ' . Php::code($end)), $order,
                    $before === null || $after === null ? null : "$before%s$after"];
            }
        }
        return $found !== null && $one($found[2]) ? $found : null;
    }

    /**
     * The code of an expression that gives the connection `$receiver` (a
     * Redis call's) was in `$method`, evaluable outside it: a factory's or
     * helper's call, a `new` client, or a local variable set once from one
     * and then connected (its connect/auth/select calls come along), or
     * `$this->x` in an instance method. Null when there is none.
     */
    public function connectionOf(Expr $receiver, Stmt\ClassMethod $method): ?string
    {
        while ($receiver instanceof Expr\MethodCall && $this->isRedisCall($receiver)) {
            $receiver = $receiver->var;
        }
        $free = fn (Node $e) => (new NodeFinder())->findFirst([$e], fn (Node $n) => $n instanceof Expr\Variable) === null;
        if (self::property($receiver) !== null && $receiver instanceof Expr\PropertyFetch) {
            return $method->isStatic() ? null : Php::code($receiver);
        }
        if (!$receiver instanceof Expr\Variable) {
            return $free($receiver) && ($receiver instanceof Expr\StaticCall || $receiver instanceof Expr\New_ || $receiver instanceof Expr\FuncCall)
                ? Php::code($receiver) : null;
        }
        $sets = (new NodeFinder())->find($method->stmts ?? [], fn (Node $n) => $n instanceof Expr\Assign
            && $n->var instanceof Expr\Variable && $n->var->name === $receiver->name);
        if (count($sets) !== 1 || !$free($sets[0]->expr)) {
            return null;
        }
        $made = Php::code($sets[0]->expr);
        $setUp = [];
        foreach ((new NodeFinder())->find($method->stmts ?? [], fn (Node $n) => $n instanceof Expr\MethodCall
            && $n->var instanceof Expr\Variable && $n->var->name === $receiver->name && $n->name instanceof Node\Identifier
            && in_array(strtolower($n->name->toString()), ['connect', 'pconnect', 'auth', 'select', 'setoption'], true)) as $call) {
            $args = array_map(fn ($a) => $a->value, $call->args);
            if (array_filter($args, fn ($a) => !$free($a)) !== []) {
                return null;
            }
            $setUp[] = Php::code($call) . ';';
        }
        if ($setUp === []) {
            return $made;
        }
        $var = '$' . $receiver->name;
        return "(static function () { $var = $made; " . implode(' ', $setUp) . " return $var; })()";
    }

    /**
     * The host and port a copy's `connect()` (or `pconnect()`) names, each
     * a literal, a constant of the copy or a parameter's default (the
     * seed's `getRedisConn($strIp = '127.0.0.1', $intPort = 6379)`); null
     * when it names none the doctor can read.
     *
     * @return array{string, int}|null
     */
    public function connectsTo(): ?array
    {
        $class = $this->class;
        foreach ($class['does'] as $d) {
            $method = $d['node'];
            $defaults = [];
            foreach ($method->params as $param) {
                if ($param->var instanceof Expr\Variable && is_string($param->var->name) && $param->default !== null) {
                    $defaults[$param->var->name] = $param->default;
                }
            }
            $value = function (\PhpParser\Node\Expr $e) use (&$value, $class, $defaults) {
                if ($e instanceof Expr\Variable && is_string($e->name) && isset($defaults[$e->name])) {
                    return $value($defaults[$e->name]);
                }
                if ($e instanceof Expr\ClassConstFetch && $e->name instanceof Node\Identifier
                    && Protocol::isSelf($e->class)) {
                    $v = $class['constants'][$e->name->toString()] ?? null;
                    return is_array($v) ? null : $v;
                }
                $v = Php::value($e);
                return is_array($v) ? null : $v;
            };
            foreach ((new NodeFinder())->find($method->stmts ?? [], fn ($n) => $n instanceof Expr\MethodCall
                && $n->name instanceof Node\Identifier && in_array(strtolower($n->name->toString()), ['connect', 'pconnect'], true)) as $call) {
                $host = isset($call->args[0]) ? $value($call->args[0]->value) : null;
                $port = isset($call->args[1]) ? $value($call->args[1]->value) : 6379;
                if (is_string($host) && preg_match('/^[\w.-]+$/', $host) === 1 && (is_int($port) || (is_string($port) && ctype_digit($port)))) {
                    return [$host, (int) $port];
                }
            }
        }
        return null;
    }

    /** The text of a string literal or of a constant of the copy that holds one. */
    public function text(Expr $expr): ?string
    {
        if ($expr instanceof Scalar\String_) {
            return $expr->value;
        }
        if ($expr instanceof Expr\ClassConstFetch && self::isSelf($expr->class) && $expr->name instanceof Node\Identifier) {
            $value = $this->class['constants'][$expr->name->toString()] ?? null;
            return is_string($value) ? $value : null;
        }
        return null;
    }
}
