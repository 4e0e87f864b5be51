<?php

/**
 * A private network for fault tests. Redis servers run in a network
 * namespace of their own; each client host is another namespace joined to
 * it by a veth pair on 10.<net>.<host>.0/24, addresses that exist in those
 * namespaces only (the machine's own namespace gets none). Partitions and
 * packet loss are nftables rules in the servers' namespace that drop
 * packets both ways, so a partition looks like silence, not a refused
 * connection. Everything is made by the test and removed by close().
 *
 * The servers' namespace also has a service address, 10.<net>.0.1, which
 * every host reaches through its link: servers that name each other
 * (replicas, sentinels) use it, so that the addresses the sentinels hand
 * out work from every host, and isolate() can cut one server off from the
 * others while the hosts still reach it.
 *
 * The kernel's netem qdisc (latency, reordering) is often missing from VM
 * kernels (CONFIG_NET_SCH_NETEM): latency comes from a delaying proxy
 * (delay()) instead, which never reorders, as TCP would not either.
 */
final class Network
{
    private string $ns;
    private int $net;
    /** @var array<string, int> host name => index */
    private array $hosts = [];
    /** @var list<resource> */
    private array $processes = [];
    private string $dir;

    /** Why the network cannot be made here; null when it can. */
    public static function unavailable(): ?string
    {
        if (getenv('REDISLOCK_NETNS') === '0') {
            return 'REDISLOCK_NETNS=0 (tools/chroot.sh sets it: these tests run on the host)';
        }
        if (!function_exists('posix_geteuid') || posix_geteuid() !== 0) {
            return 'network namespaces need root';
        }
        foreach (['ip', 'nft'] as $tool) {
            if (trim((string) shell_exec("command -v $tool")) === '') {
                return "$tool is not installed (iproute2, nftables)";
            }
        }
        $probe = 'rlprobe' . getmypid();
        exec("ip netns add $probe 2>&1", $out, $rc);
        if ($rc !== 0) {
            return 'ip netns add was refused: ' . implode(' ', $out);
        }
        exec("ip netns exec $probe nft add table inet probe 2>&1", $out, $rc);
        exec("ip netns del $probe 2>&1");
        return $rc === 0 ? null : 'nftables was refused: ' . implode(' ', $out);
    }

    public function __construct()
    {
        $this->ns = 'rl' . getmypid() . 's';
        $this->net = 100 + getmypid() % 150;
        $this->dir = sys_get_temp_dir() . '/redislock-net-' . getmypid();
        @mkdir($this->dir);
        self::run("ip netns add {$this->ns}");
        $this->in("ip link set lo up");
        $this->in('ip addr add ' . $this->service() . '/32 dev lo');
        // Servers talking to each other on the service address: from it, to it.
        $this->in('nft -f -', "table inet rl {
            chain servers { }
            chain input { type filter hook input priority 0; policy accept;
                ip saddr {$this->service()} ip daddr {$this->service()} jump servers; }
            chain output { type filter hook output priority 0; policy accept; }
        }");
    }

    /** The servers' address for each other and for every host (see the class comment). */
    public function service(): string
    {
        return "10.{$this->net}.0.1";
    }

    /** A client host joined to the servers; returns the servers' address as it sees them. */
    public function host(string $name): string
    {
        $i = count($this->hosts) + 1;
        $this->hosts[$name] = $i;
        $ns = $this->hostNs($name);
        $pid = getmypid();
        self::run("ip netns add $ns");
        self::run("ip netns exec $ns ip link set lo up");
        self::run("ip link add rl{$pid}a$i netns $ns type veth peer name rl{$pid}b$i netns {$this->ns}");
        self::run("ip netns exec $ns ip addr add 10.{$this->net}.$i.1/24 dev rl{$pid}a$i");
        self::run("ip netns exec $ns ip link set rl{$pid}a$i up");
        self::run("ip netns exec $ns ip route add default via 10.{$this->net}.$i.2");
        $this->in("ip addr add 10.{$this->net}.$i.2/24 dev rl{$pid}b$i");
        $this->in("ip link set rl{$pid}b$i up");
        $client = "10.{$this->net}.$i.1";
        $this->in('nft -f -', "add chain inet rl in$i
            add chain inet rl out$i
            add rule inet rl input ip saddr $client jump in$i
            add rule inet rl output ip daddr $client jump out$i");
        return $this->serverAddress($name);
    }

    public function serverAddress(string $host): string
    {
        return "10.{$this->net}.{$this->hosts[$host]}.2";
    }

    private function hostNs(string $name): string
    {
        return 'rl' . getmypid() . 'h' . $this->hosts[$name];
    }

    /**
     * Starts a redis-server in the servers' namespace on $port (every
     * address). $clock: a libfaketime clock file this server reads its
     * time from (see setClock()).
     */
    public function redis(int $port, ?string $clock = null, array $args = []): void
    {
        $server = ['redis-server'];
        if ($clock !== null) {
            FakeClock::skipUnlessServersCanHaveOne();
            $server = FakeClock::server($server, $clock);
        }
        $dir = "{$this->dir}/$port";
        @mkdir($dir);
        $this->start($port, [...$server, '--port', (string) $port, '--bind', '0.0.0.0',
            '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--dir', $dir, ...$args]);
    }

    private function start(int $port, array $cmd): void
    {
        $log = "{$this->dir}/stdout-$port";
        $this->processes[] = proc_open(['ip', 'netns', 'exec', $this->ns, ...$cmd],
            [1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes);
        for ($i = 0; $i < 200 && $this->cli($port, 'PING') !== 'PONG'; $i++) {
            usleep(25000);
        }
        if ($this->cli($port, 'PING') !== 'PONG') {
            $status = proc_get_status(end($this->processes));
            $how = $status['signaled'] ? " (killed by signal {$status['termsig']})" : '';
            throw new RuntimeException("redis-server on $port did not start$how: " . @file_get_contents($log));
        }
    }

    /**
     * Starts a sentinel in the servers' namespace on $port, watching the
     * master on $masterPort (as "mymaster", quorum 2) through the service
     * address; it takes a master down after $downMs of silence.
     */
    public function sentinel(int $port, int $masterPort, int $downMs): void
    {
        $conf = "{$this->dir}/sentinel-$port.conf";
        file_put_contents($conf, "port $port\nbind 0.0.0.0\nprotected-mode no\ndir {$this->dir}\n"
            . "sentinel monitor mymaster {$this->service()} $masterPort 2\n"
            . "sentinel down-after-milliseconds mymaster $downMs\n"
            . "sentinel failover-timeout mymaster 10000\n");
        $this->start($port, ['redis-server', $conf, '--sentinel']);
    }

    /** A libfaketime clock file (FakeClock), at the real time to start with. */
    public function clock(string $name): string
    {
        return FakeClock::file($this->dir, $name);
    }

    /** redis-cli in the servers' namespace; the reply's text, trimmed. */
    public function cli(int $port, string ...$args): string
    {
        $cmd = ['ip', 'netns', 'exec', $this->ns, 'redis-cli', '-p', (string) $port, ...$args];
        $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        proc_close($p);
        return trim($out);
    }

    /** A command line run in the host's namespace. */
    public function on(string $host, array $cmd): array
    {
        return ['ip', 'netns', 'exec', $this->hostNs($host), ...$cmd];
    }

    /** Cuts $host off from the servers (those on $ports only, when given): its packets are dropped both ways. */
    public function partition(string $host, array $ports = []): void
    {
        $this->drop($host, '', $ports);
    }

    /** Drops $percent of the packets between $host and the servers, at random, both ways. */
    public function loss(string $host, int $percent): void
    {
        $this->drop($host, "numgen random mod 100 < $percent", []);
    }

    private function drop(string $host, string $match, array $ports): void
    {
        $i = $this->hosts[$host];
        $set = $ports === [] ? '' : '{ ' . implode(', ', $ports) . ' }';
        $this->in('nft -f -', sprintf("add rule inet rl in$i %s %s drop\nadd rule inet rl out$i %s %s drop",
            $set === '' ? '' : "tcp dport $set", $match, $set === '' ? '' : "tcp sport $set", $match));
    }

    /**
     * Cuts the server on $port off from the other servers (replicas,
     * sentinels: all that reach it on the service address), while every
     * host still reaches it: the old master of a split brain.
     */
    public function isolate(int $port): void
    {
        $this->in('nft -f -', "add rule inet rl servers tcp dport $port drop\nadd rule inet rl servers tcp sport $port drop");
    }

    /** Ends every partition and loss of $host. */
    public function heal(string $host): void
    {
        $i = $this->hosts[$host];
        $this->in('nft -f -', "flush chain inet rl in$i\nflush chain inet rl out$i");
    }

    /**
     * A proxy in the servers' namespace on $port that forwards to $target
     * after $ms (plus up to $jitterMs more, in order) each way.
     */
    public function delay(int $port, int $target, int $ms, int $jitterMs = 0): void
    {
        $cmd = ['ip', 'netns', 'exec', $this->ns, PHP_BINARY, '-n', __DIR__ . '/delay_proxy.php',
                (string) $port, (string) $target, (string) $ms, (string) $jitterMs];
        $this->processes[] = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['file', "{$this->dir}/proxy-$port", 'w']], $pipes);
        if (fgets($pipes[1]) !== "listening\n") {
            throw new RuntimeException('the delay proxy did not start: ' . @file_get_contents("{$this->dir}/proxy-$port"));
        }
    }

    /** Stops every process and removes the namespaces, their links and rules. */
    public function close(): void
    {
        foreach ($this->processes as $p) {
            proc_terminate($p, SIGKILL);
            proc_close($p);
        }
        $this->processes = [];
        foreach (array_keys($this->hosts) as $name) {
            exec('ip netns del ' . $this->hostNs($name) . ' 2>&1');
        }
        exec("ip netns del {$this->ns} 2>&1");
        $this->hosts = [];
        exec('rm -rf ' . escapeshellarg($this->dir));
    }

    private function in(string $cmd, ?string $stdin = null): void
    {
        self::run("ip netns exec {$this->ns} $cmd", $stdin);
    }

    private static function run(string $cmd, ?string $stdin = null): void
    {
        $p = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        fwrite($pipes[0], (string) $stdin);
        fclose($pipes[0]);
        $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        if (proc_close($p) !== 0) {
            throw new RuntimeException("$cmd: $out");
        }
    }
}
