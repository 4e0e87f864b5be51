<?php

/**
 * The install paths: phpize (PIE's fallback and docs/Dockerfile.source's), `make install` /
 * `make uninstall` and the fresh build beside an installed copy. Installs
 * happen in a throwaway root (tools/throwaway-root.sh: an overlay of this
 * machine's root in a private mount namespace), so the machine is left as
 * it was; where that cannot be had the tests say so and skip.
 */
final class InstallTest extends RedisLockTestCase
{
    use Installs;

    public function testMakeInstallEnablesItForCliAndFpmAndUninstallRemovesEveryFile(): void
    {
        $out = $this->inThrowawayRoot(<<<'SH'
            set -e
            make install >/dev/null
            echo "cli: $(php -m | grep -x redislock)"
            echo "fpm: $(php-fpm$(php-config --version | cut -d. -f1,2) -m | grep -x redislock)"
            echo "so: $(ls "$(php-config --extension-dir)/redislock.so")"
            make uninstall >/dev/null
            # (/var/lib/php: Debian's record of an administrator's phpdismod, which
            # would leave a later .deb's module off.)
            echo "after: $(php -m | grep -cx redislock || true) $(find /etc/php /usr/lib/php /var/lib/php "$(php-config --extension-dir)" -name '*redislock*' | wc -l)"
            SH);
        $this->assertStringContainsString("cli: redislock\n", $out);
        $this->assertStringContainsString("fpm: redislock\n", $out);
        $this->assertMatchesRegularExpression('~so: /\S+/redislock\.so~', $out);
        $this->assertStringContainsString("after: 0 0\n", $out);
        // The machine itself was not touched.
        exec('php -m', $modules);
        $this->assertNotContains('redislock', $modules);
    }

    /**
     * `make deb`: installed, the extension is enabled for cli and fpm and
     * the tools work; removed, disabled; purged, nothing is left.
     */
    public function testTheDebIsEnabledOnInstallDisabledOnRemovalAndPurgedWithoutTrace(): void
    {
        [$code, $out] = self::sh('make -s deb', self::root());
        $this->assertSame(0, $code, $out);
        [$tools, $deb] = array_slice(explode("\n", trim($out)), -2);
        $this->assertMatchesRegularExpression('~^target/deb/php\d+\.\d+-redislock_[\d.]+-1_\w+\.deb$~', $deb);
        $this->assertMatchesRegularExpression('~^target/deb/redislock-tools_[\d.]+-1_all\.deb$~', $tools);
        foreach ([$deb, $tools] as $package) {
            exec('dpkg-deb -f ' . escapeshellarg(self::root() . "/$package") . ' Maintainer Version', $fields);
        }
        $version = self::version();
        $this->assertSame(2, count(array_keys($fields, "Version: $version-1")), 'both of Cargo.toml\'s version');
        foreach (preg_grep('/^Maintainer: /', $fields) as $maintainer) {
            $this->assertMatchesRegularExpression('/^Maintainer: [^<>]+ <[^@\s]+@[^@\s]+\.[a-z]+>$/', $maintainer);
            $this->assertStringNotContainsString('localhost', $maintainer);
        }
        exec('dpkg-deb -f ' . escapeshellarg(self::root() . "/$deb") . ' Depends', $depends);
        $this->assertStringContainsString('phpapi-' . trim(shell_exec('php-config --phpapi')), implode('', $depends));
        $out = $this->inThrowawayRoot(<<<SH
            set -e
            ver=\$(php-config --version | cut -d. -f1,2)
            # What the machine had before (a dashboard's throttle file in
            # the session folder, from an earlier sign-in): not the package's.
            before=\$(find /etc/php /usr/lib/php /var/lib/php -name '*redislock*' | wc -l)
            dpkg -i $deb >/dev/null 2>&1
            echo "installed: \$(php -m | grep -x redislock) \$(php-fpm\$ver -m | grep -x redislock)"
            dpkg -i $tools >/dev/null 2>&1
            echo "cli: \$(redislock --help | head -1)"
            echo "classes: \$(php -r 'require "/usr/share/php/RedisLock/autoload.php"; var_export([class_exists(RedisLock\\Operator\\Report::class), class_exists(RedisLock\\Nope::class)]);')"
            echo "changelog: \$(zcat /usr/share/doc/redislock-tools/changelog.Debian.gz | head -1)"
            dpkg -r redislock-tools >/dev/null 2>&1
            echo "tools removed: \$(ls -d /usr/bin/redislock /usr/share/php/RedisLock /usr/share/redislock 2>/dev/null | wc -l)"
            dpkg -r php\$ver-redislock >/dev/null 2>&1
            echo "removed: \$(php -m | grep -cx redislock || true) \$(php-fpm\$ver -m | grep -cx redislock || true) \$(find /etc/php/\$ver -name '*redislock*' | wc -l)"
            dpkg -P php\$ver-redislock >/dev/null 2>&1
            echo "purged: \$(( \$(find /etc/php /usr/lib/php /var/lib/php -name '*redislock*' | wc -l) - before )) \$(dpkg-query -W php\$ver-redislock 2>/dev/null | wc -l)"
            SH);
        $this->assertStringContainsString("installed: redislock redislock\n", $out);
        $this->assertStringContainsString("cli: Usage: redislock [options] <command> [arguments]\n", $out);
        $this->assertStringContainsString("classes: array (\n  0 => true,\n  1 => false,\n)\n", $out);
        $this->assertStringContainsString("changelog: redislock ($version-1) unstable; urgency=medium\n", $out);
        $this->assertStringContainsString("tools removed: 0\n", $out);
        // Removal keeps the conffile (mods-available/redislock.ini) only.
        $this->assertStringContainsString("removed: 0 0 1\n", $out);
        $this->assertStringContainsString("purged: 0 0\n", $out);
    }

    /** make test/demo/bench run PHP through tools/php.sh: the fresh build wins over an installed copy. */
    public function testTheFreshBuildIsLoadedEvenWhenACopyIsInstalled(): void
    {
        $so = getenv('REDISLOCK_SO');
        $fresh = sys_get_temp_dir() . '/redislock-fresh-' . getmypid() . '.so';
        copy($so, $fresh);
        try {
            $out = $this->inThrowawayRoot(<<<SH
                set -e
                make install >/dev/null
                REDISLOCK_SO=$fresh tools/php.sh -r 'echo implode("\\n", array_unique(array_filter(file("/proc/self/maps", FILE_IGNORE_NEW_LINES), fn (\$l) => str_contains(\$l, "redislock")))), "\\n", extension_loaded("redis") ? "redis loaded" : "", "\\n";'
                SH);
        } finally {
            unlink($fresh);
        }
        $this->assertStringContainsString($fresh, $out);
        $this->assertStringNotContainsString('/redislock.so', $out, 'the installed copy was mapped');
        $this->assertStringNotContainsString('already loaded', $out);
        $this->assertStringContainsString('redis loaded', $out, 'the other conf.d files are still read');
    }

    /**
     * PIE's fallback path and docs/Dockerfile.source's: phpize, configure,
     * make, make install, in the source archive alone (`make dist`'s, no
     * git checkout), with the Dockerfile's own command line.
     */
    public function testTheSourceArchiveAloneBuildsWithPhpizeAndInstallsALoadableExtension(): void
    {
        $root = self::root();
        $this->assertSame(1, preg_match('/^RUN (cd ext && phpize .*)$/m', file_get_contents("$root/docs/Dockerfile.source"), $m));
        $copy = sys_get_temp_dir() . '/redislock-phpize-' . getmypid();
        // The phpize and php-config of the PHP running the tests first.
        $path = dirname(PHP_BINARY) . ':' . getenv('PATH');
        [$code, $out] = self::sh("DIST_DIR=$copy-dist tools/dist.sh source", $root);
        $this->assertSame(0, $code, $out);
        $version = self::version();
        [$code, $out] = self::sh("mkdir -p $copy && tar -xzf $copy-dist/redislock-$version.tar.gz -C $copy --strip-components=1 && rm -rf $copy-dist", $root);
        $this->assertSame(0, $code, $out);
        $this->assertFileExists("$copy/ext/config.m4");
        $this->assertFileExists("$copy/Cargo.lock");
        $this->assertDirectoryDoesNotExist("$copy/.git");
        $this->assertDirectoryDoesNotExist("$copy/target");
        try {
            // make install before make: a clear message, nothing installed.
            [$code, $out] = self::sh('cd ext && phpize >/dev/null && ./configure >/dev/null && make install', $copy, ['INSTALL_ROOT' => "$copy/root", 'PATH' => $path]);
            $this->assertNotSame(0, $code);
            $this->assertStringContainsString('modules/redislock.so is not built', $out);
            $this->assertDirectoryDoesNotExist("$copy/root");
            // CARGO_TARGET_DIR: cargo's cache stays in the repository between
            // runs. No LTO: this checks the install path, not the speed, and
            // the release profile's LTO would be paid a second time.
            [$code, $out] = self::sh($m[1], $copy, ['INSTALL_ROOT' => "$copy/root", 'CARGO_TARGET_DIR' => "$root/target/phpize",
                'CARGO_PROFILE_RELEASE_LTO' => 'false', 'CARGO_PROFILE_RELEASE_CODEGEN_UNITS' => '16',
                'PATH' => $path . ':' . getenv('HOME') . '/.cargo/bin']);
            $this->assertSame(0, $code, $out);
            // configure checks the Rust that Cargo.toml needs, and names
            // libclang itself (it named libclang-cpp.so.14).
            preg_match('/^rust-version = "(.*)"$/m', file_get_contents("$root/Cargo.toml"), $rust);
            $this->assertStringContainsString("checking for Rust >= $rust[1]... yes", $out);
            $this->assertMatchesRegularExpression('#checking for libclang \(bindgen reads the PHP headers with it\)\.\.\. \S*/libclang(\.so|-[0-9])#', $out);
            $installed = $copy . '/root' . trim(shell_exec('PATH=' . escapeshellarg($path) . ' php-config --extension-dir')) . '/redislock.so';
            $this->assertFileExists($installed, $out);
            $script = "\$lock = (new RedisLock\\Client())->lock('phpize-built');"
                . "var_dump(\$lock->acquire(), \$lock->token() > 0, \$lock->release(), phpversion('redislock'));";
            [, $check] = self::sh(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', '-d', "extension=$installed",
                '-d', 'redislock.default_dsn=' . RedisServer::$main->dsn(), '-r', $script])));
            $this->assertSame("bool(true)\nbool(true)\nbool(true)\nstring(" . strlen($version) . ") \"$version\"\n", $check);
        } finally {
            exec('rm -rf ' . escapeshellarg($copy));
        }
    }

    /** What PIE reads: a php-ext package whose build-path holds the config.m4. */
    public function testTheComposerPackageIsAPieExtension(): void
    {
        $composer = json_decode(file_get_contents(self::root() . '/composer.json'), true, 512, JSON_THROW_ON_ERROR);
        $this->assertSame('php-ext', $composer['type']);
        $this->assertSame('redislock', $composer['php-ext']['extension-name']);
        // The pre-built asset first (DistTest), the source build when none fits.
        $this->assertSame(['pre-packaged-binary', 'composer-default'], $composer['php-ext']['download-url-method']);
        $this->assertSame('redislock', (new ReflectionExtension('redislock'))->getName());
        $this->assertFileExists(self::root() . '/' . $composer['php-ext']['build-path'] . '/config.m4');
        $this->assertFileExists(self::root() . '/LICENSE');
        $this->assertSame($composer['license'], 'MIT');
        $this->assertStringContainsString('license = "MIT"', file_get_contents(self::root() . '/Cargo.toml'));
    }

    /**
     * Every composer.json is valid, by Debian's Composer. Trixie's (2.8)
     * knows `php-ext` but not its `download-url-method` list (Composer
     * 2.9's): it checks the root package without that key, which the
     * check with Composer 2.10.2's schema (below) covers.
     */
    public function testTheComposerFilesAreValid(): void
    {
        $schema = '/usr/share/php/data/Composer/res/composer-schema.json';
        $known = is_file($schema) ? file_get_contents($schema) : '';
        $dir = sys_get_temp_dir() . '/redislock-composer-' . getmypid();
        try {
            foreach (['composer.json', 'php/composer.json', 'stubs/composer.json'] as $file) {
                $path = self::root() . "/$file";
                $root = json_decode(file_get_contents($path), true, 512, JSON_THROW_ON_ERROR);
                if (isset($root['php-ext']['download-url-method']) && str_contains($known, '"php-ext"') && !str_contains($known, 'pre-packaged-binary')) {
                    unset($root['php-ext']['download-url-method']);
                    @mkdir($dir);
                    $path = "$dir/composer.json";
                    file_put_contents($path, json_encode($root, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
                }
                [$code, $out] = self::sh('composer validate --no-check-publish --no-check-lock --strict ' . escapeshellarg($path),
                    self::root(), ['COMPOSER_ALLOW_SUPERUSER' => '1', 'COMPOSER_HOME' => sys_get_temp_dir() . '/redislock-composer-home']);
                $this->assertSame(0, $code, "$file: $out");
            }
        } finally {
            exec('rm -rf ' . escapeshellarg($dir));
        }
    }

    /**
     * The root package is valid as Composer >= 2.7 and PIE read it:
     * `composer validate` of Debian bookworm's Composer 2.5 does not know
     * the `php-ext` section and says "The property php-ext is not defined"
     * (only a publish warning). Composer's own strict check, against the
     * schema of Composer 2.10.2 (tools/composer-schema.json, from
     * composer/composer, MIT), with Debian's validator.
     */
    public function testTheRootPackageIsValidForAComposerThatKnowsPhpExt(): void
    {
        require_once '/usr/share/php/Composer/autoload.php';
        // Strict as `composer validate` is for publishing (no unknown
        // section, a name and a description), the way Composer 2.8 makes
        // the check: in the schema object itself.
        $schema = json_decode(file_get_contents(self::root() . '/tools/composer-schema.json'));
        $schema->additionalProperties = false;
        $schema->required = ['name', 'description'];
        $errors = function (string $json) use ($schema): array {
            $validator = new JsonSchema\Validator();
            $data = json_decode($json);
            $validator->validate($data, $schema);
            return array_column($validator->getErrors(), 'message');
        };
        $root = file_get_contents(self::root() . '/composer.json');
        // The check is strict: an unknown section fails it.
        $this->assertSame([], $errors($root));
        $this->assertSame(['The property php-extension is not defined and the definition does not allow additional properties'], $errors(str_replace('"php-ext"', '"php-extension"', $root)));
        $this->assertNotSame([], $errors(str_replace('"type": "php-ext"', '"type": 7', $root)), 'the sections are checked too');
    }

    /** A project adds the stubs with `composer require --dev`, as the README says (offline: a path repository). */
    /**
     * docs/frameworks.md's Composer lines, pasted into a project as written
     * (the path put in), install the adapters offline, and their classes
     * load: with `"*"` Composer refused the path package (no stable
     * version, minimum-stability stable).
     */
    public function testTheFrameworksComposerLinesInstallTheAdaptersAsPasted(): void
    {
        $docs = file_get_contents(self::root() . '/docs/frameworks.md');
        $this->assertSame(1, preg_match('/```json\n(.*?"repositories".*?)\n```/s', $docs, $m), 'the snippet');
        $lines = str_replace('/path/to/redislock/php', self::root() . '/php', $m[1]);
        $project = sys_get_temp_dir() . '/redislock-adapters-project-' . getmypid();
        mkdir($project);
        try {
            // Packagist off: offline, the path repository alone.
            file_put_contents("$project/composer.json", "{\n$lines\n}\n");
            $composer = json_decode(file_get_contents("$project/composer.json"), true, 512, JSON_THROW_ON_ERROR);
            $composer['repositories'][] = ['packagist.org' => false];
            file_put_contents("$project/composer.json", json_encode($composer, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
            $so = getenv('REDISLOCK_SO') ?: self::root() . '/target/release/libredislock.so';
            $env = ['COMPOSER_ALLOW_SUPERUSER' => '1', 'COMPOSER_HOME' => "$project/.composer"];
            [$code, $out] = self::sh(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-d', "extension=$so", '/usr/bin/composer', 'update', '--no-interaction'])), $project, $env);
            $this->assertSame(0, $code, $out);
            $this->assertFileExists("$project/vendor/redislock/redislock/src/Symfony/LockStore.php");
            [$code, $out] = self::sh(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-d', "extension=$so", '-r',
                'require "vendor/autoload.php"; echo class_exists(RedisLock\\Operator\\Prometheus::class) ? "loaded" : "missing";'])), $project);
            $this->assertSame('loaded', $out);
        } finally {
            exec('rm -rf ' . escapeshellarg($project));
        }
    }

    public function testAProjectRequiresTheStubsWithComposer(): void
    {
        $project = sys_get_temp_dir() . '/redislock-stubs-project-' . getmypid();
        mkdir($project);
        try {
            file_put_contents("$project/composer.json", '{"repositories": [{"packagist.org": false}]}');
            $env = ['COMPOSER_ALLOW_SUPERUSER' => '1', 'COMPOSER_HOME' => "$project/.composer"];
            [$code, $out] = self::sh('composer config repositories.redislock-stubs path ' . escapeshellarg(self::root() . '/stubs')
                . ' && composer require --dev --no-interaction redislock/redislock-stubs:@dev', $project, $env);
            $this->assertSame(0, $code, $out);
            $this->assertFileEquals(self::root() . '/stubs/redislock.php', "$project/vendor/redislock/redislock-stubs/redislock.php");
            $lock = json_decode(file_get_contents("$project/composer.lock"), true, 512, JSON_THROW_ON_ERROR);
            $this->assertSame(['redislock/redislock-stubs'], array_column($lock['packages-dev'], 'name'));
        } finally {
            exec('rm -rf ' . escapeshellarg($project));
        }
    }
}
