<?php
// amqpspec driver for php-amqplib (Debian php-amqplib, PHP 8), AMQP 0-9-1; contract: docs/drivers.md.
//
// Written as php-amqplib's tutorials are: AMQPStreamConnection, channel(), queue_declare,
// basic_publish of an AMQPMessage, basic_get, basic_consume with a callback and wait(),
// tx_select/tx_commit, confirm_select with ack/nack handlers and wait_for_pending_acks.
// The library reads only inside the application's calls (there is no I/O thread), so `idle`
// loops on wait() with a timeout, as a php-amqplib consumer does, which lets it answer
// heartbeats. Socket read/write timeouts are the contract's `timeout`; pcntl_alarm backs them.

declare(strict_types=1);

require_once '/usr/share/php/PhpAmqpLib/autoload.php';

use PhpAmqpLib\Connection\AMQPStreamConnection;
use PhpAmqpLib\Exception\AMQPProtocolChannelException;
use PhpAmqpLib\Exception\AMQPProtocolConnectionException;
use PhpAmqpLib\Exception\AMQPTimeoutException;
use PhpAmqpLib\Message\AMQPMessage;

const EXIT_DONE = 0;
const EXIT_ERROR = 1;
const EXIT_USAGE = 2;
const EXIT_UNSUPPORTED = 3;

$SECRETS = [];

function scrub(string $text): string
{
    global $SECRETS;
    foreach ($SECRETS as $secret) {
        if ($secret !== '') {
            $text = str_replace($secret, '***', $text);
        }
    }
    return $text;
}

function emit(string $event, array $fields = []): void
{
    $record = ['event' => $event];
    foreach ($fields as $key => $value) {
        $record[$key] = is_string($value) ? scrub($value) : $value;
    }
    fwrite(STDOUT, json_encode($record, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE) . "\n");
    fflush(STDOUT);
}

function usage_error(string $message): void
{
    fwrite(STDERR, 'driver: error: ' . scrub($message) . "\n");
    exit(EXIT_USAGE);
}

function parse_bool(string $name, string $text): bool
{
    $low = strtolower(trim($text));
    if (in_array($low, ['1', 'true', 'yes', 'on'], true)) {
        return true;
    }
    if (in_array($low, ['0', 'false', 'no', 'off'], true)) {
        return false;
    }
    usage_error("$name=" . json_encode($text) . ' is not a boolean (true/false)');
    return false;
}

function parse_number(string $name, string $text, bool $whole): float|int
{
    $ok = $whole ? preg_match('/^\d+$/', $text) === 1 : (is_numeric($text) && is_finite((float) $text) && (float) $text >= 0);
    if (!$ok) {
        usage_error("$name=" . json_encode($text) . ' must be a finite ' . ($whole ? 'whole ' : '') . 'number >= 0');
    }
    return $whole ? (int) $text : (float) $text;
}

function parse_args(array $argv): array
{
    global $SECRETS;
    if (count($argv) < 2) {
        usage_error('usage: driver URL WORKLOAD [key=value ...]; workloads: connect, publish, consume, get, rpc, tx, confirm, idle');
    }
    $url = $argv[0];
    $SECRETS[] = $url;
    $parts = parse_url($url);
    if ($parts === false || !in_array($parts['scheme'] ?? '', ['amqp', 'amqps'], true) || empty($parts['host'])) {
        usage_error('the URL must be amqp://host[:port]/ or amqps://host[:port]/');
    }
    if (($parts['scheme'] ?? '') === 'amqps') {
        usage_error('amqps:// is not supported by the php-amqplib driver');
    }
    if (isset($parts['pass']) && $parts['pass'] !== '') {
        $SECRETS[] = $parts['pass'];
        $SECRETS[] = rawurldecode($parts['pass']);
    }
    $path = isset($parts['path']) ? ltrim($parts['path'], '/') : '';
    $o = [
        'workload' => $argv[1], 'host' => $parts['host'], 'port' => $parts['port'] ?? 5672,
        'user' => isset($parts['user']) ? rawurldecode($parts['user']) : 'guest',
        'password' => isset($parts['pass']) ? rawurldecode($parts['pass']) : 'guest',
        'vhost' => $path === '' ? '/' : rawurldecode($path),
        'queue' => 'amqpspec-q', 'exchange' => '', 'routing_key' => null, 'count' => 1, 'body' => 'hello',
        'ack' => true, 'prefetch' => 0, 'persistent' => false, 'timeout' => 5.0, 'heartbeat' => null,
        'declare' => false,
    ];
    foreach (array_slice($argv, 2) as $item) {
        $at = strpos($item, '=');
        if ($at === false || $at === 0) {
            usage_error('option ' . json_encode($item) . ' is not key=value');
        }
        $key = substr($item, 0, $at);
        $value = substr($item, $at + 1);
        switch ($key) {
            case 'queue': case 'exchange': case 'routing_key': case 'body':
                $o[$key] = $value;
                break;
            case 'count': case 'prefetch':
                $o[$key] = parse_number($key, $value, true);
                break;
            case 'timeout':
                $o[$key] = (float) parse_number($key, $value, false);
                break;
            case 'heartbeat':
                $o[$key] = $value === '' ? null : (float) parse_number($key, $value, false);
                break;
            case 'ack': case 'persistent': case 'declare':
                $o[$key] = parse_bool($key, $value);
                break;
            default: // 1.0's options or a driver's own: not used here
        }
    }
    $o['routing_key'] ??= $o['queue'];
    return $o;
}

/** The driver's own deadline for each wait, behind the socket timeouts. */
function step(array $o, string $what): void
{
    $GLOBALS['STEP'] = $what;
    pcntl_alarm((int) ceil($o['timeout']) + 1);
}

function open_connection(array $o): array
{
    $heartbeat = $o['heartbeat'] === null ? 0 : (int) $o['heartbeat'];
    // the library wants a read/write timeout of at least twice the heartbeat
    $io_timeout = max($o['timeout'], 2.0 * $heartbeat);
    $conn = new AMQPStreamConnection($o['host'], $o['port'], $o['user'], $o['password'], $o['vhost'],
        false, 'AMQPLAIN', null, 'en_US', $o['timeout'], $io_timeout, null, false, $heartbeat);
    emit('connected');
    step($o, 'running ' . $o['workload']);
    $ch = $conn->channel();
    return [$conn, $ch];
}

function declare_queue(array $o, $ch): void
{
    if ($o['declare']) {
        $ch->queue_declare($o['queue'], false, false, false, false);
    }
}

function message(array $o, array $properties = []): AMQPMessage
{
    if ($o['persistent']) {
        $properties['delivery_mode'] = AMQPMessage::DELIVERY_MODE_PERSISTENT;
    }
    return new AMQPMessage($o['body'], $properties);
}

function delivered(int $n, AMQPMessage $msg): void
{
    emit('delivered', ['n' => $n, 'body' => $msg->getBody(), 'redelivered' => (bool) $msg->isRedelivered()]);
}

function close_all(array $o, $conn, $ch): void
{
    step($o, 'closing');
    $ch->close();
    $conn->close();
    emit('closed', ['by' => 'client']);
}

function w_publish(array $o, bool $tx): void
{
    [$conn, $ch] = open_connection($o);
    declare_queue($o, $ch);
    if ($tx) {
        $ch->tx_select();
    }
    for ($n = 1; $n <= $o['count']; $n++) {
        step($o, "publishing message $n");
        $ch->basic_publish(message($o), $o['exchange'], $o['routing_key']);
        emit('published', ['n' => $n]);
    }
    if ($tx) {
        step($o, 'waiting for tx.commit-ok');
        $ch->tx_commit();
    }
    close_all($o, $conn, $ch);
}

function w_confirm(array $o): void
{
    [$conn, $ch] = open_connection($o);
    declare_queue($o, $ch);
    $outcome = null;
    $ch->set_ack_handler(function () use (&$outcome) { $outcome = true; });
    $ch->set_nack_handler(function () use (&$outcome) { $outcome = false; });
    $ch->confirm_select();
    for ($n = 1; $n <= $o['count']; $n++) {
        $outcome = null;
        $ch->basic_publish(message($o), $o['exchange'], $o['routing_key']);
        emit('published', ['n' => $n]);
        step($o, "waiting for the confirm of message $n");
        $ch->wait_for_pending_acks($o['timeout']);
        if ($outcome === null) {
            throw new AMQPTimeoutException("no confirm within {$o['timeout']} s for message $n");
        }
        emit('confirmed', ['n' => $n, 'ack' => $outcome]);
    }
    close_all($o, $conn, $ch);
}

function w_consume(array $o): void
{
    [$conn, $ch] = open_connection($o);
    declare_queue($o, $ch);
    if ($o['prefetch'] > 0) {
        $ch->basic_qos(0, $o['prefetch'], false);
    }
    $n = 0;
    $tag = $ch->basic_consume($o['queue'], '', false, !$o['ack'], false, false,
        function (AMQPMessage $msg) use (&$n, $o) {
            if ($n >= $o['count']) {
                return; // beyond the count: left unacked, requeued at close
            }
            $n++;
            delivered($n, $msg);
            if ($o['ack']) {
                $msg->ack();
            }
        });
    while ($n < $o['count']) {
        step($o, 'waiting for delivery ' . ($n + 1));
        $ch->wait(null, false, $o['timeout']);
    }
    step($o, 'cancelling the consumer');
    $ch->basic_cancel($tag);
    close_all($o, $conn, $ch);
}

function w_get(array $o): void
{
    [$conn, $ch] = open_connection($o);
    declare_queue($o, $ch);
    $n = 0;
    for ($i = 1; $i <= $o['count']; $i++) {
        step($o, "waiting for the answer to basic.get $i");
        $msg = $ch->basic_get($o['queue'], !$o['ack']);
        if ($msg === null) {
            emit('empty');
            continue;
        }
        $n++;
        delivered($n, $msg);
        if ($o['ack']) {
            $msg->ack();
        }
    }
    close_all($o, $conn, $ch);
}

function w_rpc(array $o): void
{
    [$conn, $ch] = open_connection($o);
    [$reply_to] = $ch->queue_declare('', false, false, true, false);
    $reply = null;
    $ch->basic_consume($reply_to, '', false, true, false, false, function (AMQPMessage $msg) use (&$reply) {
        $reply ??= $msg;
    });
    $ch->basic_publish(message($o, ['reply_to' => $reply_to, 'correlation_id' => 'amqpspec-1']),
        $o['exchange'], $o['routing_key']);
    emit('published', ['n' => 1]);
    step($o, 'waiting for the reply');
    while ($reply === null) {
        $ch->wait(null, false, $o['timeout']);
    }
    delivered(1, $reply);
    close_all($o, $conn, $ch);
}

function w_idle(array $o): void
{
    [$conn, $ch] = open_connection($o);
    pcntl_alarm(0);
    $end = microtime(true) + $o['timeout'];
    while (($left = $end - microtime(true)) > 0) {
        try { // a consumer loop's wait(): the library reads, and answers heartbeats, only in here
            $ch->wait(null, false, min($left, 0.5));
        } catch (AMQPTimeoutException $e) {
        }
    }
    close_all($o, $conn, $ch);
}

function report_close(Throwable $e): void
{
    if ($e instanceof AMQPProtocolChannelException || $e instanceof AMQPProtocolConnectionException) {
        $scope = $e instanceof AMQPProtocolChannelException ? 'channel' : 'connection';
        emit('closed', ['by' => 'server', 'scope' => $scope, 'code' => $e->getCode(), 'text' => $e->getMessage()]);
    }
}

$o = parse_args(array_slice($argv, 1));
$workloads = [
    'connect' => function (array $o) { [$conn, $ch] = open_connection($o); close_all($o, $conn, $ch); },
    'publish' => fn (array $o) => w_publish($o, false),
    'tx' => fn (array $o) => w_publish($o, true),
    'confirm' => 'w_confirm',
    'consume' => 'w_consume',
    'get' => 'w_get',
    'rpc' => 'w_rpc',
    'idle' => 'w_idle',
];
if (!isset($workloads[$o['workload']])) {
    emit('unsupported', ['workload' => $o['workload']]);
    exit(EXIT_UNSUPPORTED);
}
pcntl_async_signals(true);
pcntl_signal(SIGALRM, function () use ($o) {
    emit('error', ['type' => 'Timeout', 'message' => "no answer within {$o['timeout']} s while {$GLOBALS['STEP']}"]);
    exit(EXIT_ERROR);
});
step($o, 'opening the connection');
try {
    $workloads[$o['workload']]($o);
} catch (Throwable $e) { // a library error: the contract's error event
    report_close($e);
    $type = (new ReflectionClass($e))->getShortName();
    emit('error', ['type' => $type, 'message' => $e->getMessage()]);
    exit(EXIT_ERROR);
}
emit('done');
exit(EXIT_DONE);
