#!/usr/bin/env bash
# Generates the IDE stubs of the built extension into DIR: the classes from
# cargo-php, and the exception classes (registered at module startup, which
# cargo-php does not see) from PHP's reflection of the loaded extension.
set -euo pipefail
so=$1; dir=$2
mkdir -p "$dir"
cargo php stubs --out "$dir/redislock.php" "$so" >/dev/null
REDISLOCK_SO=$(realpath "$so") "$(dirname "$0")/php.sh" -r '
  echo "<?php\n\n// Stubs for redislock: exception classes\n\nnamespace RedisLock {\n";
  $ext = new ReflectionExtension("redislock");
  $classes = array_filter($ext->getClassNames(), fn ($c) => is_subclass_of($c, "Throwable"));
  sort($classes);
  foreach ($classes as $c) {
    $r = new ReflectionClass($c);
    printf("    class %s extends \\%s {}\n", $r->getShortName(), $r->getParentClass()->getName());
  }
  echo "}\n";
' > "$dir/exceptions.php"
