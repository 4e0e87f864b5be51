<?php
/**
 * A TCP proxy that delays what it forwards, for fault tests on kernels
 * without netem: php delay_proxy.php PORT TARGET_PORT MS JITTER_MS.
 * Listens on every address, forwards to 127.0.0.1:TARGET_PORT; every chunk
 * read goes out MS (plus up to JITTER_MS) later, in order, each way. Prints
 * "listening" once ready.
 */
[, $port, $target, $ms, $jitter] = array_map('intval', $argv);
$server = stream_socket_server("tcp://0.0.0.0:$port", $errno, $error);
if ($server === false) {
    fwrite(STDERR, "$error\n");
    exit(1);
}
echo "listening\n";
/** @var array<int, array{socket: resource, peer: resource, queue: list<array{float, string}>, last: float}> */
$ends = [];
while (true) {
    $read = [$server];
    foreach ($ends as $end) {
        $read[] = $end['socket'];
    }
    $now = microtime(true);
    $wait = 0.05;
    foreach ($ends as $end) {
        if ($end['queue'] !== []) {
            $wait = min($wait, max(0, $end['queue'][0][0] - $now));
        }
    }
    $write = $except = null;
    if (@stream_select($read, $write, $except, 0, (int) ($wait * 1e6)) === false) {
        continue;
    }
    foreach ($read as $socket) {
        if ($socket === $server) {
            $client = @stream_socket_accept($server, 0);
            $upstream = $client ? @stream_socket_client("tcp://127.0.0.1:$target", $errno, $error, 2) : false;
            if ($client && $upstream) {
                stream_set_blocking($client, false);
                stream_set_blocking($upstream, false);
                $ends[(int) $client] = ['socket' => $client, 'peer' => $upstream, 'queue' => [], 'last' => 0.0];
                $ends[(int) $upstream] = ['socket' => $upstream, 'peer' => $client, 'queue' => [], 'last' => 0.0];
            }
            continue;
        }
        $id = (int) $socket;
        $data = @fread($socket, 65536);
        if ($data === '' || $data === false) {
            if (feof($socket)) {
                $peer = $ends[$id]['peer'];
                unset($ends[$id], $ends[(int) $peer]);
                @fclose($socket);
                @fclose($peer);
            }
            continue;
        }
        // In order: never before the chunk ahead of it.
        $at = max(microtime(true) + ($ms + ($jitter > 0 ? mt_rand(0, $jitter) : 0)) / 1000, $ends[$id]['last']);
        $ends[$id]['last'] = $at;
        $ends[$id]['queue'][] = [$at, $data];
    }
    $now = microtime(true);
    foreach ($ends as $id => &$end) {
        while ($end['queue'] !== [] && $end['queue'][0][0] <= $now) {
            [, $data] = array_shift($end['queue']);
            stream_set_blocking($end['peer'], true);
            @fwrite($end['peer'], $data);
            stream_set_blocking($end['peer'], false);
        }
    }
    unset($end);
}
