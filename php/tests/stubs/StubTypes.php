<?php
// The PHPDoc types of the stubs, parsed with PHPStan's own parser (Debian's
// php-phpstan-phpdoc-parser): whether a value is of a type, and whether a
// type fits inside a native one. Types it does not know fail, never pass.

require_once '/usr/share/php/PHPStan/PhpDocParser/autoload.php';

use PHPStan\PhpDocParser\Ast\ConstExpr\ConstExprIntegerNode;
use PHPStan\PhpDocParser\Ast\ConstExpr\ConstExprStringNode;
use PHPStan\PhpDocParser\Ast\PhpDoc\InvalidTagValueNode;
use PHPStan\PhpDocParser\Ast\PhpDoc\PhpDocNode;
use PHPStan\PhpDocParser\Ast\Type\ArrayShapeNode;
use PHPStan\PhpDocParser\Ast\Type\CallableTypeNode;
use PHPStan\PhpDocParser\Ast\Type\ConstTypeNode;
use PHPStan\PhpDocParser\Ast\Type\GenericTypeNode;
use PHPStan\PhpDocParser\Ast\Type\IdentifierTypeNode;
use PHPStan\PhpDocParser\Ast\Type\NullableTypeNode;
use PHPStan\PhpDocParser\Ast\Type\TypeNode;
use PHPStan\PhpDocParser\Ast\Type\UnionTypeNode;
use PHPStan\PhpDocParser\Lexer\Lexer;
use PHPStan\PhpDocParser\Parser\ConstExprParser;
use PHPStan\PhpDocParser\Parser\PhpDocParser;
use PHPStan\PhpDocParser\Parser\TokenIterator;
use PHPStan\PhpDocParser\Parser\TypeParser;
use PHPStan\PhpDocParser\ParserConfig;

final class StubTypes
{
    /** Type names PHPStan and Psalm both know, by the native type holding them. */
    private const SCALARS = [
        'int' => 'int', 'positive-int' => 'int', 'float' => 'float', 'string' => 'string',
        'non-empty-string' => 'string', 'bool' => 'bool', 'true' => 'bool', 'false' => 'bool',
        'null' => 'null', 'array' => 'array', 'list' => 'array', 'non-empty-list' => 'array',
        'callable' => 'callable', 'mixed' => 'mixed',
    ];

    /** @param list<string> $templates names of the method's @template types */
    public function __construct(private string $namespace = '', private array $templates = [])
    {
    }

    public static function parseDoc(string $doc): PhpDocNode
    {
        if (class_exists(ParserConfig::class)) {
            // phpdoc-parser 2 (trixie): one config for every part.
            $config = new ParserConfig([]);
            $constants = new ConstExprParser($config);
            $parser = new PhpDocParser($config, new TypeParser($config, $constants), $constants);
            $lexer = new Lexer($config);
        } else {
            $constants = new ConstExprParser(true);
            $parser = new PhpDocParser(new TypeParser($constants), $constants);
            $lexer = new Lexer();
        }
        $node = $parser->parse(new TokenIterator($lexer->tokenize($doc)));
        foreach ($node->getTags() as $tag) {
            if ($tag->value instanceof InvalidTagValueNode) {
                throw new UnexpectedValueException("$tag->name does not parse: {$tag->value->exception->getMessage()}");
            }
        }
        return $node;
    }

    /** The class an identifier names, as the stubs' namespace resolves it. */
    public function className(string $name): string
    {
        if ($name[0] === '\\') {
            return substr($name, 1);
        }
        return $this->namespace === '' ? $name : "$this->namespace\\$name";
    }

    /** Whether `$value` is of type `$type`. */
    public function accepts(TypeNode $type, mixed $value): bool
    {
        if ($type instanceof NullableTypeNode) {
            return $value === null || $this->accepts($type->type, $value);
        }
        if ($type instanceof UnionTypeNode) {
            foreach ($type->types as $t) {
                if ($this->accepts($t, $value)) {
                    return true;
                }
            }
            return false;
        }
        if ($type instanceof ConstTypeNode && $type->constExpr instanceof ConstExprStringNode) {
            return $value === $type->constExpr->value;
        }
        if ($type instanceof ArrayShapeNode) {
            return is_array($value) && $this->shapeAccepts($type, $value);
        }
        if ($type instanceof GenericTypeNode) {
            return $this->genericAccepts($type, $value);
        }
        if ($type instanceof IdentifierTypeNode) {
            return match ($type->name) {
                'int' => is_int($value),
                'positive-int' => is_int($value) && $value > 0,
                'float' => is_float($value),
                'string' => is_string($value),
                'non-empty-string' => is_string($value) && $value !== '',
                'bool' => is_bool($value),
                'true' => $value === true,
                'false' => $value === false,
                'null' => $value === null,
                'array' => is_array($value),
                'list' => is_array($value) && array_is_list($value),
                'non-empty-list' => is_array($value) && $value !== [] && array_is_list($value),
                'mixed' => true,
                default => in_array($type->name, $this->templates, true)
                    || (class_exists($this->className($type->name)) && $value instanceof ($this->className($type->name))),
            };
        }
        throw new UnexpectedValueException("a type the check does not know: $type");
    }

    private function shapeAccepts(ArrayShapeNode $shape, array $value): bool
    {
        $left = $value;
        foreach ($shape->items as $item) {
            $key = $item->keyName instanceof ConstExprIntegerNode ? (int) $item->keyName->value
                : ($item->keyName instanceof ConstExprStringNode ? $item->keyName->value : (string) $item->keyName);
            if (!array_key_exists($key, $value)) {
                if ($item->optional) {
                    continue;
                }
                return false;
            }
            if (!$this->accepts($item->valueType, $value[$key])) {
                return false;
            }
            unset($left[$key]);
        }
        return $left === [];
    }

    private function genericAccepts(GenericTypeNode $type, mixed $value): bool
    {
        $args = $type->genericTypes;
        switch ($type->type->name) {
            case 'int':
                [$min, $max] = array_map(
                    fn (TypeNode $t) => $t instanceof ConstTypeNode ? (int) $t->constExpr->value : null,
                    $args,
                );
                return is_int($value) && ($min === null || $value >= $min) && ($max === null || $value <= $max);
            case 'list':
            case 'non-empty-list':
                if (!is_array($value) || !array_is_list($value) || ($value === [] && $type->type->name === 'non-empty-list')) {
                    return false;
                }
                return $this->allAccept(null, $args[0], $value);
            case 'array':
                return is_array($value) && $this->allAccept(count($args) === 2 ? $args[0] : null, end($args), $value);
        }
        throw new UnexpectedValueException("a type the check does not know: $type");
    }

    private function allAccept(?TypeNode $keys, TypeNode $values, array $array): bool
    {
        foreach ($array as $k => $v) {
            if (($keys !== null && !$this->accepts($keys, $k)) || !$this->accepts($values, $v)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The native types a PHPDoc type's values can have (int, string, array,
     * a class name, ...): they must all fit the method's native type.
     *
     * @return list<string>
     */
    public function natives(TypeNode $type): array
    {
        if ($type instanceof NullableTypeNode) {
            return ['null', ...$this->natives($type->type)];
        }
        if ($type instanceof UnionTypeNode) {
            return array_merge(...array_map(fn ($t) => $this->natives($t), $type->types));
        }
        if ($type instanceof ConstTypeNode) {
            return [get_debug_type($type->constExpr->value)];
        }
        if ($type instanceof ArrayShapeNode) {
            return ['array'];
        }
        if ($type instanceof CallableTypeNode) {
            return ['callable'];
        }
        if ($type instanceof GenericTypeNode) {
            return [self::SCALARS[$type->type->name] ?? throw new UnexpectedValueException("unknown generic $type")];
        }
        if ($type instanceof IdentifierTypeNode) {
            if (isset(self::SCALARS[$type->name])) {
                return [self::SCALARS[$type->name]];
            }
            if (in_array($type->name, $this->templates, true)) {
                return ['mixed'];
            }
            return [$this->className($type->name)];
        }
        throw new UnexpectedValueException("a type the check does not know: $type");
    }

    /** The class names a type mentions (to check that they exist). */
    public function classes(TypeNode $type): array
    {
        return array_values(array_filter($this->natives($type), fn (string $n) => !in_array($n, self::SCALARS, true)));
    }

    /**
     * Whether a value of native type `$native` may be a `$name` ("?float"
     * holds "null" and "float", "mixed" and no type hold anything).
     */
    public static function fits(string $name, ?string $native): bool
    {
        if ($native === null || $native === 'mixed') {
            return true;
        }
        $allowed = explode('|', str_starts_with($native, '?') ? 'null|' . substr($native, 1) : $native);
        foreach ($allowed as $a) {
            if ($name === $a || (class_exists($name) && is_a($name, $a, true))) {
                return true;
            }
        }
        return false;
    }
}
