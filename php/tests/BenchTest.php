<?php

/**
 * The benchmarks run only under `make bench`; this keeps them from rotting
 * unseen: each must at least parse.
 */
final class BenchTest extends PHPUnit\Framework\TestCase
{
    public function testEveryBenchmarkScriptParses(): void
    {
        $files = glob(dirname(__DIR__) . '/bench/*.php');
        $this->assertNotEmpty($files);
        foreach ($files as $file) {
            exec(escapeshellarg(PHP_BINARY) . ' -l ' . escapeshellarg($file) . ' 2>&1', $out, $code);
            $this->assertSame(0, $code, implode("\n", $out));
        }
    }
}
