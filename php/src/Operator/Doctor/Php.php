<?php

declare(strict_types=1);

namespace RedisLock\Operator\Doctor;

use PhpParser\Node;
use PhpParser\Node\Expr;
use PhpParser\Node\Scalar;
use PhpParser\Node\Stmt;
use PhpParser\NodeFinder;
use PhpParser\NodeTraverser;
use PhpParser\NodeVisitor;
use PhpParser\ParserFactory;
use PhpParser\PrettyPrinter;

/**
 * Reading and printing PHP, with nikic/PHP-Parser (4.15 or 5): a file's
 * syntax tree, the facts of each class and trait it declares, and the file
 * printed again after edits to the tree, every untouched byte as it was
 * (the format-preserving printer).
 */
final class Php
{
    private static ?object $parser = null;
    private static ?object $lexer = null;

    /** Loads PHP-Parser: Composer's autoloader, else the distribution's (Debian's php-parser). */
    public static function load(): void
    {
        if (class_exists(ParserFactory::class)) {
            return;
        }
        foreach ([stream_resolve_include_path('PhpParser/autoload.php'), '/usr/share/php/PhpParser/autoload.php'] as $autoload) {
            if (is_string($autoload) && is_file($autoload)) {
                require_once $autoload;
                break;
            }
        }
        if (!class_exists(ParserFactory::class)) {
            throw new \InvalidArgumentException('doctor reads PHP with nikic/PHP-Parser (4.15 or later), which this PHP cannot find:'
                . ' install it (apt install php-parser, or composer require nikic/php-parser)');
        }
        foreach (['tokenizer' => 'token_get_all', 'ctype' => 'ctype_alnum'] as $ext => $function) {
            if (!function_exists($function)) {
                throw new \InvalidArgumentException("doctor reads PHP with PHP-Parser, which needs PHP's $ext extension, and this PHP has not loaded it");
            }
        }
        // PHP-Parser 5 keeps the 4.x names as aliases, declared only when first named.
        foreach (['Scalar\Encapsed', 'Scalar\EncapsedStringPart', 'Scalar\LNumber', 'Scalar\DNumber', 'Expr\ArrayItem', 'Stmt\PropertyProperty'] as $alias) {
            class_exists("PhpParser\\Node\\$alias");
        }
    }

    /**
     * The file's code parsed: `stmts` to edit (a copy), `old` and `tokens`
     * (what the printer keeps the untouched code from). Null, with the
     * parser's message, when it is no valid PHP.
     *
     * @return array{stmts: list<Node>, old: list<Node>, tokens: array, code: string}|string
     */
    public static function parse(string $code): array|string
    {
        self::load();
        [$parser, $lexer] = self::parser();
        try {
            $old = $parser->parse($code) ?? [];
        } catch (\PhpParser\Error $e) {
            return $e->getMessage();
        }
        $tokens = method_exists($parser, 'getTokens') ? $parser->getTokens() : $lexer->getTokens();
        $traverser = new NodeTraverser();
        $traverser->addVisitor(new NodeVisitor\CloningVisitor());
        $stmts = $traverser->traverse($old);
        $traverser = new NodeTraverser();
        $traverser->addVisitor(new NodeVisitor\ParentConnectingVisitor());
        $traverser->traverse($stmts);
        return ['stmts' => $stmts, 'old' => $old, 'tokens' => $tokens, 'code' => $code];
    }

    /** The file as it reads after the edits made to `stmts`. */
    public static function print(array $parsed): string
    {
        return (new PrettyPrinter\Standard())->printFormatPreserving($parsed['stmts'], $parsed['old'], $parsed['tokens']);
    }

    /** An expression as PHP code. */
    public static function code(Node $node): string
    {
        return $node instanceof Expr ? (new PrettyPrinter\Standard())->prettyPrintExpr($node) : (new PrettyPrinter\Standard())->prettyPrint([$node]);
    }

    /** Statements from code, with no position of their own (the printer prints them anew). */
    public static function statements(string $code): array
    {
        self::load();
        $stmts = self::parser()[0]->parse("<?php $code");
        $traverser = new NodeTraverser();
        $traverser->addVisitor(new class extends \PhpParser\NodeVisitorAbstract {
            public function enterNode(Node $node)
            {
                $node->setAttributes(array_intersect_key($node->getAttributes(), ['comments' => true, 'kind' => true]));
                return null;
            }
        });
        return $traverser->traverse($stmts);
    }

    /** An expression from code (as `statements()`). */
    public static function expression(string $code): Expr
    {
        return self::statements("$code;")[0]->expr;
    }

    /** @return array{object, ?object} a parser that records what format preservation needs, and its lexer (4.x) */
    private static function parser(): array
    {
        if (self::$parser === null) {
            if (method_exists(ParserFactory::class, 'createForHostVersion')) {
                self::$parser = (new ParserFactory())->createForHostVersion();
            } else {
                self::$lexer = new \PhpParser\Lexer\Emulative(['usedAttributes' => [
                    'comments', 'startLine', 'endLine', 'startTokenPos', 'endTokenPos', 'startFilePos', 'endFilePos',
                ]]);
                self::$parser = new \PhpParser\Parser\Php7(self::$lexer);
            }
        }
        return [self::$parser, self::$lexer];
    }

    /**
     * The facts of each class and trait the file declares, in the shape the
     * classifier reads: its name, namespace, parent, constants, methods
     * (parameters with their defaults), the strings it holds, and per method
     * what it calls and returns; `node` is the declaration in `stmts`.
     *
     * @return list<array>
     */
    public static function classes(string $file, array $parsed): array
    {
        $found = [];
        $walk = function (array $stmts, string $namespace) use (&$walk, &$found, $file, $parsed): void {
            foreach ($stmts as $stmt) {
                if ($stmt instanceof Stmt\Namespace_) {
                    $walk($stmt->stmts, $stmt->name === null ? '' : $stmt->name->toString());
                } elseif (($stmt instanceof Stmt\Class_ || $stmt instanceof Stmt\Trait_) && $stmt->name !== null) {
                    $found[] = self::facts($stmt, $namespace, $file, $parsed['code']);
                } elseif ($stmt instanceof Stmt\Declare_ && is_array($stmt->stmts)) {
                    $walk($stmt->stmts, $namespace);
                } elseif ($stmt instanceof Stmt\If_ || $stmt instanceof Stmt\Block) {
                    // (`if (!class_exists('RedisLock')) { class RedisLock ... }`)
                    $walk($stmt->stmts, $namespace);
                }
            }
        };
        $walk($parsed['stmts'], '');
        return $found;
    }

    /** The string literals given to `new <class>(...)` in the file, by the class's short name, lowercase. */
    public static function constructed(array $parsed): array
    {
        $out = [];
        foreach ((new NodeFinder())->findInstanceOf($parsed['stmts'], Expr\New_::class) as $new) {
            if ($new->class instanceof Node\Name && ($new->args[0]->value ?? null) instanceof Scalar\String_) {
                $out[strtolower($new->class->getLast())][] = $new->args[0]->value->value;
            }
        }
        return $out;
    }

    /** The files the file loads: line and what (as code), of each require/include. */
    public static function loads(array $parsed): array
    {
        $out = [];
        foreach ((new NodeFinder())->findInstanceOf($parsed['stmts'], Expr\Include_::class) as $include) {
            $out[] = [$include->getStartLine(), self::code($include->expr)];
        }
        return $out;
    }

    private static function facts(Stmt\ClassLike $node, string $namespace, string $file, string $code): array
    {
        $finder = new NodeFinder();
        $class = ['file' => $file, 'line' => $node->getStartLine(), 'trait' => $node instanceof Stmt\Trait_,
            'name' => $node->name->toString(), 'namespace' => $namespace,
            'extends' => $node instanceof Stmt\Class_ && $node->extends !== null ? $node->extends->toString() : null,
            'constants' => [], 'methods' => [], 'properties' => [], 'strings' => self::strings($node),
            'factory' => false, 'predis' => false, 'does' => [], 'node' => $node,
            'code' => substr($code, $node->getStartFilePos(), $node->getEndFilePos() - $node->getStartFilePos() + 1)];
        foreach ($node->getConstants() as $const) {
            foreach ($const->consts as $c) {
                $class['constants'][$c->name->toString()] = self::value($c->value);
            }
        }
        foreach ($node->getProperties() as $property) {
            foreach ($property->props as $p) {
                $class['properties'][$p->name->toString()] = $property->isPublic();
            }
        }
        foreach ($node->getMethods() as $method) {
            $name = $method->name->toString();
            $params = [];
            foreach ($method->params as $param) {
                if ($param->var instanceof Expr\Variable && is_string($param->var->name)) {
                    $params[$param->var->name] = $param->default === null ? null : self::value($param->default);
                    if ($param->flags !== 0) {
                        // (A promoted constructor parameter is a property too.)
                        $class['properties'][$param->var->name] = ($param->flags & Stmt\Class_::MODIFIER_PUBLIC) !== 0;
                    }
                }
            }
            $class['methods'][$name] = $params;
            $body = $method->stmts ?? [];
            $calls = [];
            foreach ($finder->find($body, fn (Node $n) => $n instanceof Expr\MethodCall || $n instanceof Expr\StaticCall
                || $n instanceof Expr\NullsafeMethodCall || $n instanceof Expr\FuncCall) as $call) {
                $callee = $call instanceof Expr\FuncCall ? $call->name : $call->name;
                if ($callee instanceof Node\Name || $callee instanceof Node\Identifier) {
                    $calls[] = strtolower($callee instanceof Node\Name ? $callee->getLast() : $callee->toString());
                }
            }
            $returns = [];
            foreach ($finder->findInstanceOf($body, Stmt\Return_::class) as $return) {
                $returns[] = $return->expr === null ? '' : strtolower(self::code($return->expr));
            }
            $class['does'][$name] = ['static' => $method->isStatic(), 'calls' => $calls, 'returns' => $returns,
                'strings' => self::strings($method), 'abstract' => $method->stmts === null, 'node' => $method];
        }
        foreach ($finder->find($node, fn (Node $n) => $n instanceof Node\Name) as $name) {
            if (stripos($name->toString(), 'Predis') !== false) {
                // (Predis answers a refused SET NX with NULL, where phpredis says false.)
                $class['predis'] = true;
            }
            if (strcasecmp($name->getLast(), 'RedisFactory') === 0) {
                $class['factory'] = true;
            }
        }
        return $class;
    }

    /** The strings the node holds: literals, and the constant parts of interpolated strings. */
    private static function strings(Node $node): array
    {
        $out = [];
        foreach ((new NodeFinder())->find($node, fn (Node $n) => $n instanceof Scalar\String_ || $n instanceof Scalar\EncapsedStringPart) as $s) {
            $out[] = $s->value;
        }
        return $out;
    }

    /** A value as written: a number or a string literal as its value, anything else as code. */
    public static function value(Expr $expr): mixed
    {
        if ($expr instanceof Scalar\LNumber || $expr instanceof Scalar\DNumber || $expr instanceof Scalar\String_) {
            return $expr->value;
        }
        if ($expr instanceof Expr\UnaryMinus && ($expr->expr instanceof Scalar\LNumber || $expr->expr instanceof Scalar\DNumber)) {
            return -$expr->expr->value;
        }
        return ['code' => self::code($expr)];
    }
}
