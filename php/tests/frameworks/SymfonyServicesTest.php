<?php

use RedisLock\Symfony\Messenger\TransportFactory;
use RedisLock\Symfony\RequestBoundary;
use Symfony\Component\Config\FileLocator;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Loader\YamlFileLoader;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

foreach (['Config', 'DependencyInjection', 'Yaml'] as $component) {
    // make test installs them (tools/deps.sh); said, not fatal, where not.
    if (is_file("/usr/share/php/Symfony/Component/$component/autoload.php")) {
        require_once "/usr/share/php/Symfony/Component/$component/autoload.php";
    }
}

/**
 * docs/frameworks.md's `config/services.yaml`, as written (the DSN put in),
 * loaded into Symfony's own container: the factories it builds take locks
 * and permits on redislock, the transport factory and the request
 * boundary carry the tags Messenger and the kernel look for.
 */
final class SymfonyServicesTest extends RedisLockTestCase
{
    public function testTheDocsServicesBuildTheFactoriesAndTagsAsWritten(): void
    {
        if (!class_exists(ContainerBuilder::class) || !class_exists(YamlFileLoader::class)) {
            $this->markTestSkipped("Symfony's DependencyInjection, Config and Yaml components are installed by make test");
        }
        $docs = file_get_contents(dirname(__DIR__, 3) . '/docs/frameworks.md');
        $this->assertSame(1, preg_match('/```yaml\n(# config\/services.yaml\n.*?)```/s', $docs, $m), 'the block');
        $dir = sys_get_temp_dir() . '/redislock-services-' . getmypid();
        @mkdir($dir);
        try {
            file_put_contents("$dir/services.yaml", str_replace('redis://127.0.0.1:6379', RedisServer::$main->dsn(), $m[1]));
            $container = new ContainerBuilder();
            (new YamlFileLoader($container, new FileLocator($dir)))->load('services.yaml');
            foreach ([LockFactory::class, SemaphoreFactory::class, TransportFactory::class, RequestBoundary::class] as $id) {
                $container->findDefinition($id)->setPublic(true);
            }
            $container->compile();

            $lock = $container->get(LockFactory::class)->createLock('services', 30);
            $this->assertTrue($lock->acquire());
            $this->assertSame(1, $this->redis->exists('services'), "the lock is Symfony's key, taken through redislock");
            $lock->release();
            $semaphore = $container->get(SemaphoreFactory::class)->createSemaphore('smtp', 2);
            $this->assertTrue($semaphore->acquire());
            $semaphore->release();
            $this->assertTrue($container->get(TransportFactory::class)->supports('redislock://127.0.0.1:6379', []));
            $this->assertArrayHasKey(TransportFactory::class, $container->findTaggedServiceIds('messenger.transport_factory'));
            $this->assertSame([['method' => 'reset']], $container->findTaggedServiceIds('kernel.reset')[RequestBoundary::class]);
        } finally {
            exec('rm -rf ' . escapeshellarg($dir));
        }
    }
}
