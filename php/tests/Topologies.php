<?php

/** A Redis Cluster of 3 primaries and 3 replicas, built with redis-cli. */
final class ClusterNodes
{
    /** @var RedisServer[] */
    public array $nodes = [];

    public function __construct()
    {
        $busPort = RedisServer::features()['clusterPort'];
        for ($i = 0; $i < 6; $i++) {
            // The bus port is set where the server can (>= 7.0): port +
            // 10000 may not exist. Before, the port is one whose + 10000 is free.
            $this->nodes[] = RedisServer::startWith(['--cluster-enabled', 'yes',
                '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000',
                ...($busPort ? ['--cluster-port', (string) RedisServer::freePort()] : [])],
                $busPort ? null : RedisServer::freePort(true));
        }
        $cmd = ['redis-cli', '--cluster', 'create'];
        foreach ($this->nodes as $n) {
            $cmd[] = "127.0.0.1:{$n->port}";
        }
        array_push($cmd, '--cluster-replicas', '1', '--cluster-yes');
        $p = proc_open($cmd, [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        if (proc_close($p) !== 0) {
            throw new RuntimeException('redis-cli --cluster create failed');
        }
        waitFor('cluster_state:ok on every node', function () {
            foreach ($this->nodes as $n) {
                if (!str_contains($n->client()->rawCommand('CLUSTER', 'INFO'), 'cluster_state:ok')) {
                    return false;
                }
            }
            return true;
        });
    }

    public function dsn(): string
    {
        $hosts = array_map(fn ($n) => "127.0.0.1:{$n->port}", $this->nodes);
        return 'redis+cluster://' . implode(',', $hosts);
    }

    /** phpredis' cluster client, to look at what the extension left. */
    public function client(): RedisCluster
    {
        return new RedisCluster(null, array_map(fn ($n) => "127.0.0.1:{$n->port}", $this->nodes), 2, 2);
    }
}

/** A master and a replica of it. */
final class ReplicatedPair
{
    public RedisServer $master;
    public RedisServer $replica;

    public function __construct()
    {
        $this->master = RedisServer::start();
        $this->replica = RedisServer::startWith(['--replicaof', '127.0.0.1', (string) $this->master->port]);
        waitFor('the replica in sync', fn () => str_contains(
            $this->replica->client()->info('replication')['master_link_status'] ?? '', 'up'));
    }
}

/** A server with a TLS port (with a private CA) and an ACL user app/s3cret. */
final class TlsServer
{
    public RedisServer $server;
    public int $tlsPort;

    public function __construct()
    {
        RedisServer::requires('tls', 'TLS (built without it)');
        $this->tlsPort = RedisServer::freePort();
        $this->server = RedisServer::startWith(function (string $dir) {
            $run = function (string $cmd) use ($dir) {
                exec("cd " . escapeshellarg($dir) . " && $cmd 2>/dev/null", $out, $code);
                if ($code !== 0) {
                    throw new RuntimeException("failed: $cmd");
                }
            };
            $run('openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=redislock test CA"');
            $run('openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=server');
            file_put_contents("$dir/server.ext", "subjectAltName=IP:127.0.0.1\n");
            $run('openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile server.ext');
            return ['--tls-port', (string) $this->tlsPort, '--tls-cert-file', "$dir/server.crt",
                '--tls-key-file', "$dir/server.key", '--tls-ca-cert-file', "$dir/ca.crt",
                '--tls-auth-clients', 'no', '--user', 'app', 'on', '>s3cret', '~*',
                ...(RedisServer::features()['aclChannels'] ? ['&*'] : []), '+@all'];
        });
    }

    public function dsn(string $userinfo): string
    {
        return "rediss://$userinfo@127.0.0.1:{$this->tlsPort}?tls_ca=" . $this->server->dir() . '/ca.crt';
    }
}

function waitFor(string $what, callable $done, float $seconds = 30): void
{
    $deadline = microtime(true) + $seconds;
    while (true) {
        try {
            if ($done()) {
                return;
            }
        } catch (Throwable) {
        }
        if (microtime(true) > $deadline) {
            throw new RuntimeException("timed out waiting for $what");
        }
        usleep(50000);
    }
}
