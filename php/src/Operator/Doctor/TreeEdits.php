<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use PhpParser\Node;
use PhpParser\Node\Expr;
use PhpParser\Node\Stmt;
use PhpParser\NodeFinder;
use PhpParser\NodeTraverser;
use PhpParser\NodeVisitorAbstract;

/** The edits Rewrite makes to a method's syntax tree. */
trait TreeEdits
{
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

    /**
     * After a method's calls were mapped: the statements that are only a
     * call of `$commands` go, and the locals nothing reads any more; why
     * not done when a Redis call is left (null: none is).
     */
    private function leftOver(Stmt\ClassMethod $method, array $commands, string $theirs): ?string
    {
        $this->dropCalls($method, $commands);
        $this->dropDeadLocals($method);
        $left = (new NodeFinder())->findFirst($method->stmts, fn (Node $n) => $this->protocol->isRedisCall($n));
        return $left === null ? null
            : "line {$left->getStartLine()}: " . Php::code($left) . " is Redis work the doctor cannot map onto the extension's $theirs()";
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
