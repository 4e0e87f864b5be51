<?php
require_once __DIR__ . '/lib/RedisQueue.php';

$q = new RedisQueue();
var_export($q->enqueue('mail', 17)); echo "\n";
var_export($q->enqueue('mail', [18, 19], 10, 60)); echo "\n";
$task = $q->top('mail');
var_export($task['id']); echo "\n";
var_export($q->dequeue('mail', $task['id'], $task['score'])); echo "\n";
var_export($q->dequeue('mail', $task['id'], $task['score'])); echo "\n";
$q->enqueue('mail', 20);
var_export($q->pop('mail')['id']); echo "\n";
var_export($q->pop('mail')); echo "\n";
var_export(count($q->top('mail', 5))); echo " due\n";
var_export($q->enqueue('mail', 17, 10, -1)); echo "\n";
var_export(count($q->top('mail', 5))); echo " due\n";
