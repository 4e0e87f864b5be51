<?php
// What reflection says of a set of classes, as plain arrays: the same code
// describes the extension's classes (in the test's PHP) and the stubs' (run
// as a script in a PHP without the extension: `php -n describe.php FILE`
// prints the JSON of the classes FILE declares).

/** @param list<class-string> $classes */
function stub_describe(array $classes): array
{
    $out = [];
    foreach ($classes as $class) {
        $r = new ReflectionClass($class);
        $methods = [];
        foreach ($r->getMethods() as $m) {
            if ($m->getDeclaringClass()->getName() !== $r->getName()) {
                continue;
            }
            $params = [];
            foreach ($m->getParameters() as $p) {
                $default = $p->isDefaultValueAvailable() ? $p->getDefaultValue() : null;
                if (is_int($default) && str_contains((string) $p->getType(), 'float')) {
                    // `float $wait = 0`: the stub's 0 became 0.0, the extension's stays 0.
                    $default = (float) $default;
                }
                $params[] = [
                    'name' => $p->getName(),
                    'type' => $p->hasType() ? (string) $p->getType() : null,
                    'optional' => $p->isOptional(),
                    'default' => $p->isDefaultValueAvailable() ? var_export($default, true) : null,
                    'byRef' => $p->isPassedByReference(),
                    'variadic' => $p->isVariadic(),
                ];
            }
            $methods[$m->getName()] = [
                'modifiers' => Reflection::getModifierNames($m->getModifiers()),
                'return' => $m->hasReturnType() ? (string) $m->getReturnType() : null,
                'params' => $params,
                'doc' => $m->getDocComment() ?: null,
            ];
        }
        ksort($methods);
        $constants = $r->getConstants();
        ksort($constants);
        $out[$r->getName()] = [
            'parent' => $r->getParentClass() ? $r->getParentClass()->getName() : null,
            'modifiers' => Reflection::getModifierNames($r->getModifiers()),
            'interfaces' => $r->getInterfaceNames(),
            'constants' => $constants,
            'methods' => $methods,
            'doc' => $r->getDocComment() ?: null,
        ];
    }
    ksort($out);
    return $out;
}

if (PHP_SAPI === 'cli' && realpath($_SERVER['SCRIPT_FILENAME'] ?? '') === __FILE__) {
    $before = array_merge(get_declared_classes(), get_declared_interfaces());
    require $argv[1];
    $declared = array_merge(get_declared_classes(), get_declared_interfaces());
    echo json_encode(stub_describe(array_values(array_diff($declared, $before))), JSON_THROW_ON_ERROR);
}
