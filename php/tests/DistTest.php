<?php

/**
 * The release's files (`make dist`, tools/dist.sh) for the PHP running the
 * suite (Debian bookworm's 8.2 under `make test`, trixie's 8.4 under `make
 * test-chroot`): the pre-built asset is named as PIE looks for it,
 * installs as PIE installs it and passes the contract suite there; the
 * checksums check; the Dockerfile's steps install it; the release workflow
 * builds an asset for every PHP it promises. (The source archive's build
 * with phpize: InstallTest.)
 */
final class DistTest extends RedisLockTestCase
{
    private static ?string $dir = null;

    use Installs;

    /**
     * The release's files for this PHP in a directory of this run's (the
     * suite runs twice at once in CI): the asset of the extension under
     * test, the source archive, SHA256SUMS. Returns [dir, asset path].
     */
    private function dist(): array
    {
        if (self::$dir === null) {
            self::$dir = sys_get_temp_dir() . '/redislock-dist-' . getmypid();
            $env = ['DIST_DIR' => self::$dir, 'SO' => getenv('REDISLOCK_SO') ?: self::root() . '/target/release/libredislock.so',
                'PHP_CONFIG' => self::phpConfig()];
            foreach (['asset', 'source', 'sums'] as $what) {
                [$code, $out] = self::sh("tools/dist.sh $what", null, $env);
                $this->assertSame(0, $code, $out);
            }
        }
        $assets = glob(self::$dir . '/php_redislock-*.zip');
        $this->assertCount(1, $assets);
        return [self::$dir, $assets[0]];
    }

    public static function tearDownAfterClass(): void
    {
        if (self::$dir !== null) {
            exec('rm -rf ' . escapeshellarg(self::$dir));
            self::$dir = null;
        }
    }

    /**
     * The names PIE 1.4 tries for a pre-built asset, best first
     * (php/pie's src/Platform/PrePackagedBinaryAssetName.php, written
     * again here from its rule): php_<ext>-<version>_php<major.minor>-<arch>-
     * <os family>-<libc>[-debug] with no thread-safety suffix, then with
     * -nts or -zts, .zip before .tgz, for PIE's name of the machine and
     * (later releases) its alias.
     */
    private static function pieNames(string $ext, string $version, string $php, string $machine, string $libc, bool $debug, bool $zts): array
    {
        [$arch, $alias] = match ($machine) {
            'x86_64', 'amd64' => ['x86_64', 'x64'],
            'aarch64', 'arm64' => ['arm64', 'aarch64'],
            default => [$machine, $machine],
        };
        $names = [];
        foreach ([$arch, $alias] as $a) {
            foreach ([$zts ? '-zts' : '', $zts ? '-zts' : '-nts'] as $ts) {
                foreach (['zip', 'tgz'] as $format) {
                    $names[] = strtolower(sprintf('php_%s-%s_php%s-%s-linux-%s%s%s.%s', $ext, $version, $php, $a, $libc, $debug ? '-debug' : '', $ts, $format));
                }
            }
        }
        return array_values(array_unique($names));
    }

    /** The rule as PIE's own tests state it (test/unit/Platform/PrePackagedBinaryAssetNameTest.php). */
    public function testTheRuleIsPiesOwn(): void
    {
        $this->assertSame([
            'php_foobar-1.2.3_php8.2-x86_64-linux-glibc.zip',
            'php_foobar-1.2.3_php8.2-x86_64-linux-glibc.tgz',
            'php_foobar-1.2.3_php8.2-x86_64-linux-glibc-nts.zip',
            'php_foobar-1.2.3_php8.2-x86_64-linux-glibc-nts.tgz',
            'php_foobar-1.2.3_php8.2-x64-linux-glibc.zip',
            'php_foobar-1.2.3_php8.2-x64-linux-glibc.tgz',
            'php_foobar-1.2.3_php8.2-x64-linux-glibc-nts.zip',
            'php_foobar-1.2.3_php8.2-x64-linux-glibc-nts.tgz',
        ], self::pieNames('foobar', '1.2.3', '8.2', 'x86_64', 'glibc', false, false));
        $this->assertSame([
            'php_foobar-1.2.3_php8.3-x86_64-linux-musl-zts.zip',
            'php_foobar-1.2.3_php8.3-x86_64-linux-musl-zts.tgz',
            'php_foobar-1.2.3_php8.3-x64-linux-musl-zts.zip',
            'php_foobar-1.2.3_php8.3-x64-linux-musl-zts.tgz',
        ], self::pieNames('foobar', '1.2.3', '8.3', 'x86_64', 'musl', false, true));
        $this->assertSame('php_foobar-1.2.3_php8.4-arm64-linux-glibc-debug.zip', self::pieNames('foobar', '1.2.3', '8.4', 'aarch64', 'glibc', true, false)[0]);
    }

    /**
     * The asset of this PHP has PIE's first name for it, and holds the
     * stripped redislock.so at its root (where PIE takes it), with the
     * licence; it loads.
     */
    public function testTheAssetIsNamedAsPieLooksForItAndHoldsTheExtension(): void
    {
        [$dir, $asset] = $this->dist();
        exec('ldd ' . escapeshellarg(trim(shell_exec('command -v ls'))) . ' 2>&1', $ldd);
        $libc = str_contains(strtolower(implode("\n", $ldd)), 'musl') ? 'musl' : 'glibc';
        $names = self::pieNames('redislock', self::version(), PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION, php_uname('m'), $libc, (bool) PHP_DEBUG, (bool) PHP_ZTS);
        $this->assertSame($names[0], basename($asset));

        [, $entries] = self::sh('unzip -Z1 ' . escapeshellarg($asset));
        $this->assertSame(['redislock.so', 'LICENSE'], explode("\n", trim($entries)));
        $unpacked = "$dir/unpacked";
        [$code, $out] = self::sh('unzip -q -o ' . escapeshellarg($asset) . ' -d ' . escapeshellarg($unpacked));
        $this->assertSame(0, $code, $out);
        $this->assertFileEquals(self::root() . '/LICENSE', "$unpacked/LICENSE");
        // Stripped: no symbol table (the dynamic symbols PHP needs stay).
        [, $sections] = self::sh('readelf -S -W ' . escapeshellarg("$unpacked/redislock.so"));
        $this->assertStringContainsString('.dynsym', $sections);
        $this->assertStringNotContainsString('.symtab', $sections);
        [$code, $out] = self::sh(implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', '-d', "extension=$unpacked/redislock.so", '-r', 'echo phpversion("redislock");'])));
        $this->assertSame([0, self::version()], [$code, $out]);
    }

    /** SHA256SUMS names every file of the release and checks them. */
    public function testTheChecksumsCoverEveryFile(): void
    {
        [$dir, $asset] = $this->dist();
        [$code, $out] = self::sh('cd ' . escapeshellarg($dir) . ' && sha256sum -c SHA256SUMS');
        $this->assertSame(0, $code, $out);
        $this->assertSame([basename($asset) . ': OK', 'redislock-' . self::version() . '.tar.gz: OK'], explode("\n", trim($out)));
        // A changed byte is caught.
        copy($asset, "$asset.orig");
        $f = fopen($asset, 'r+');
        fseek($f, 100);
        $byte = fread($f, 1);
        fseek($f, 100);
        fwrite($f, chr(ord($byte) ^ 1));
        fclose($f);
        [$code, $out] = self::sh('cd ' . escapeshellarg($dir) . ' && sha256sum -c SHA256SUMS');
        rename("$asset.orig", $asset);
        $this->assertNotSame(0, $code);
        $this->assertStringContainsString(basename($asset) . ': FAILED', $out);
    }

    /** The php-config of the PHP running the suite (a ZTS build's own, or Debian's of this version). */
    private static function phpConfig(): string
    {
        $dir = dirname(PHP_BINARY);
        foreach (["$dir/php-config" . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION, "$dir/php-config"] as $candidate) {
            if (is_executable($candidate) && trim((string) shell_exec(escapeshellarg($candidate) . ' --php-binary')) === PHP_BINARY) {
                return $candidate;
            }
        }
        return 'php-config';
    }

    /** Skips where the suite's PHP is not Debian's: the install steps are Debian's. */
    private function needDebiansPhp(): void
    {
        if (PHP_BINARY !== '/usr/bin/php' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION) {
            $this->markTestSkipped('this suite runs ' . PHP_BINARY . ', not Debian\'s PHP: the install steps are those of Debian\'s');
        }
    }

    /**
     * Installed as PIE installs a pre-built asset on Debian (checked, its
     * redislock.so copied into the extension dir, an ini in
     * mods-available, phpenmod), in a throwaway root: the cli and fpm load
     * it, and the contract suite (the lock contract, the drop-in classes)
     * passes on it, with no build of this repository loaded.
     */
    public function testAnAssetInstalledAsPieDoesPassesTheContractSuite(): void
    {
        [$dir, $asset] = $this->dist();
        $zip = basename($asset);
        $ver = PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION;
        $suite = implode(' ', array_map(fn ($t) => "php/tests/$t.php", ['LockContractTest', 'DropInTest', 'LockServiceTest', 'RedisLockTest', 'RedisQueueTest']));
        $this->needDebiansPhp();
        $out = $this->inThrowawayRoot(<<<SH
            set -e
            cd $dir && grep " $zip\$" SHA256SUMS | sha256sum -c - && cd - >/dev/null
            unpacked=\$(mktemp -d) && unzip -q $dir/$zip -d "\$unpacked"
            install -m 0644 "\$unpacked/redislock.so" "\$(php-config --extension-dir)/redislock.so"
            echo extension=redislock > /etc/php/$ver/mods-available/redislock.ini
            phpenmod -v $ver redislock
            unset REDISLOCK_SO PHP_INI_SCAN_DIR
            echo "cli: \$(php -m | grep -x redislock) \$(php -r 'echo phpversion("redislock");')"
            echo "fpm: \$(php-fpm$ver -m | grep -x redislock)"
            for t in $suite; do
              php /usr/bin/phpunit --configuration php/tests/phpunit.xml "\$t" | tail -1
            done
            SH);
        $this->assertStringContainsString("$zip: OK\n", $out);
        $this->assertStringContainsString('cli: redislock ' . self::version() . "\n", $out);
        $this->assertStringContainsString("fpm: redislock\n", $out);
        // Each passed (skips say why, as in the suite: tail -1 is then
        // "Tests: n, Assertions: n, Skipped: n.").
        $this->assertSame(5, preg_match_all('/^(OK \(\d+ tests?, \d+ assertions\)|Tests: \d+, Assertions: \d+, Skipped: \d+\.)$/m', $out), $out);
    }

    /**
     * docs/Dockerfile's steps, run on this machine's PHP in a throwaway
     * root (with the official images' docker-php-ext-enable played by a
     * script that writes its conf.d line): they pick this PHP's asset,
     * check it and enable it. Its default version is Cargo.toml's.
     */
    public function testTheDockerfileInstallsThePrebuiltAsset(): void
    {
        [$dir] = $this->dist();
        $file = file_get_contents(self::root() . '/docs/Dockerfile');
        $this->assertSame(1, preg_match('/^ARG REDISLOCK=(\S+)$/m', $file, $arg));
        $this->assertSame(self::version(), $arg[1]);
        $this->assertSame(1, preg_match('~^COPY target/dist/\$\{REDISLOCK\}/ /tmp/redislock/$~m', $file));
        $this->assertSame(1, preg_match('/^RUN ((?:.*\\\\\n)*.*)$/m', $file, $run));
        $steps = str_replace('${REDISLOCK}', self::version(), str_replace("\\\n", "\n", $run[1]));
        $ver = PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION;
        file_put_contents("$dir/steps.sh", $steps);
        // The Dockerfile's /tmp/redislock on a /tmp of the root's own: the
        // suite runs twice at once in CI.
        $this->needDebiansPhp();
        $out = $this->inThrowawayRoot(<<<SH
            set -e
            mkdir -p /var/tmp/redislock-dist && cp $dir/*.zip $dir/SHA256SUMS $dir/steps.sh /var/tmp/redislock-dist/
            mount -t tmpfs tmpfs /tmp
            mkdir -p /tmp/redislock /tmp/fake-bin && cp /var/tmp/redislock-dist/*.zip /var/tmp/redislock-dist/SHA256SUMS /tmp/redislock/
            printf '#!/bin/sh\necho extension=\$1 > /etc/php/$ver/cli/conf.d/docker-php-ext-\$1.ini\n' > /tmp/fake-bin/docker-php-ext-enable
            chmod +x /tmp/fake-bin/docker-php-ext-enable
            unset REDISLOCK_SO PHP_INI_SCAN_DIR
            export PATH=/tmp/fake-bin:\$PATH
            sh -eu /var/tmp/redislock-dist/steps.sh
            echo "loaded: \$(php -r 'echo phpversion("redislock");')"
            echo "left: \$(ls -d /tmp/redislock 2>/dev/null | wc -l)"
            stat -c 'mode %a' "\$(php-config --extension-dir)/redislock.so"
            SH);
        $this->assertStringContainsString(': OK', $out);
        $this->assertStringContainsString('loaded: ' . self::version() . "\n", $out);
        $this->assertStringContainsString("mode 644\n", $out);
        $this->assertStringContainsString("left: 0\n", $out);
    }

    /**
     * The release workflow (not run here: no public CI) builds an asset
     * for each PHP 8.2 to 8.5, NTS and ZTS, glibc and musl, x86_64 and
     * aarch64, with tools/dist.sh, and publishes them with SHA256SUMS,
     * the source archive and the .debs.
     */
    public function testTheReleaseWorkflowBuildsEveryPromisedAsset(): void
    {
        require_once '/usr/share/php/Symfony/Component/Yaml/autoload.php';
        $workflow = Symfony\Component\Yaml\Yaml::parseFile(self::root() . '/.github/workflows/release.yml');
        $matrix = $workflow['jobs']['assets']['strategy']['matrix'];
        $this->assertSame(['8.2', '8.3', '8.4', '8.5'], $matrix['php']);
        $this->assertEqualsCanonicalizing(['cli', 'zts', 'cli-alpine', 'zts-alpine'], $matrix['image']);
        $this->assertEqualsCanonicalizing(['ubuntu-24.04', 'ubuntu-24.04-arm'], $matrix['runner']);
        $steps = implode("\n", array_map(fn ($s) => ($s['run'] ?? '') . ($s['uses'] ?? ''), $workflow['jobs']['assets']['steps']));
        $this->assertStringContainsString('tools/dist.sh asset', $steps);
        $release = implode("\n", array_map(fn ($s) => ($s['run'] ?? '') . ($s['uses'] ?? ''), $workflow['jobs']['release']['steps']));
        foreach (['tools/dist.sh source', 'tools/dist.sh sums', 'gh release create', 'attest-build-provenance'] as $step) {
            $this->assertStringContainsString($step, $release);
        }
    }
}
