// amqpspec driver for amqp091-go (github.com/rabbitmq/amqp091-go, Debian's
// golang-github-rabbitmq-amqp091-go-dev), AMQP 0-9-1; contract: docs/drivers.md.
//
// Written as the library's examples are: amqp.Dial (DialConfig only when a heartbeat is
// asked for), conn.Channel, QueueDeclare, PublishWithContext, Get, Consume, Tx/TxCommit,
// Confirm with NotifyPublish. It builds offline in GOPATH mode against the Debian source
// package (driver.toml's setup); it needs nothing but the standard library besides.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

const (
	exitDone        = 0
	exitError       = 1
	exitUsage       = 2
	exitUnsupported = 3
)

var workloadNames = []string{"connect", "publish", "consume", "get", "rpc", "tx", "confirm", "idle"}

type options struct {
	url, workload, queue, exchange, routingKey, body string
	count, prefetch                                  int
	ack, persistent, declare                         bool
	timeout                                          time.Duration
	heartbeat                                        *time.Duration
}

var (
	secrets []string
	outMu   sync.Mutex
)

func scrub(text string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, "***")
		}
	}
	return text
}

type field struct {
	key   string
	value interface{}
}

// emit writes one event line with "event" first (a Go map would sort its keys).
func emit(event string, fields ...field) {
	var b strings.Builder
	b.WriteString(`{"event":`)
	enc, _ := json.Marshal(event)
	b.Write(enc)
	for _, f := range fields {
		v := f.value
		if s, ok := v.(string); ok {
			v = scrub(s)
		}
		k, _ := json.Marshal(f.key)
		val, _ := json.Marshal(v)
		b.WriteString(",")
		b.Write(k)
		b.WriteString(":")
		b.Write(val)
	}
	b.WriteString("}\n")
	outMu.Lock()
	os.Stdout.WriteString(b.String())
	outMu.Unlock()
}

func usageError(msg string) {
	fmt.Fprintf(os.Stderr, "driver: error: %s\n", scrub(msg))
	os.Exit(exitUsage)
}

func errorType(err error) string {
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) {
		return "amqp.Error"
	}
	t := reflect.TypeOf(err)
	if t == nil {
		return "error"
	}
	return t.String()
}

func fail(err error) {
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) && amqpErr.Server && amqpErr.Code != 0 {
		emit("closed", field{"by", "server"}, field{"code", amqpErr.Code}, field{"text", amqpErr.Reason})
	}
	emit("error", field{"type", errorType(err)}, field{"message", err.Error()})
	os.Exit(exitError)
}

// The driver's own deadline for each wait: a silent peer ends in an error event.
var (
	dogMu    sync.Mutex
	dogTimer *time.Timer
	dogLimit time.Duration
)

func step(what string, limit time.Duration) {
	dogMu.Lock()
	defer dogMu.Unlock()
	if dogTimer != nil {
		dogTimer.Stop()
	}
	if limit == 0 {
		limit = dogLimit
	}
	dogTimer = time.AfterFunc(limit, func() {
		emit("error", field{"type", "Timeout"},
			field{"message", fmt.Sprintf("no answer within %g s while %s", limit.Seconds(), what)})
		os.Exit(exitError)
	})
}

func rest() {
	dogMu.Lock()
	defer dogMu.Unlock()
	if dogTimer != nil {
		dogTimer.Stop()
		dogTimer = nil
	}
}

func parseBool(name, text string) bool {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	usageError(fmt.Sprintf("%s=%q is not a boolean (true/false)", name, text))
	return false
}

func parseInt(name, text string) int {
	v, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || v < 0 {
		usageError(fmt.Sprintf("%s=%q must be a whole number >= 0", name, text))
	}
	return v
}

func parseSeconds(name, text string) time.Duration {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v > 1e6 {
		usageError(fmt.Sprintf("%s=%q must be a finite number of seconds >= 0", name, text))
	}
	return time.Duration(v * float64(time.Second))
}

func parseArgs(argv []string) options {
	if len(argv) < 2 {
		usageError("usage: driver URL WORKLOAD [key=value ...]; workloads: " + strings.Join(workloadNames, ", "))
	}
	o := options{url: argv[0], workload: argv[1], queue: "amqpspec-q", body: "hello", count: 1, ack: true,
		timeout: 5 * time.Second}
	secrets = append(secrets, o.url)
	if u, err := url.Parse(o.url); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p)
			if esc := url.QueryEscape(p); esc != p {
				secrets = append(secrets, esc)
			}
		}
	}
	routingKey := (*string)(nil)
	for _, item := range argv[2:] {
		key, value, found := strings.Cut(item, "=")
		if !found || key == "" {
			usageError(fmt.Sprintf("option %q is not key=value", item))
		}
		switch key {
		case "queue":
			o.queue = value
		case "exchange":
			o.exchange = value
		case "routing_key":
			v := value
			routingKey = &v
		case "count":
			o.count = parseInt(key, value)
		case "body":
			o.body = value
		case "ack":
			o.ack = parseBool(key, value)
		case "prefetch":
			o.prefetch = parseInt(key, value)
		case "persistent":
			o.persistent = parseBool(key, value)
		case "timeout":
			o.timeout = parseSeconds(key, value)
		case "heartbeat":
			if value != "" {
				h := parseSeconds(key, value)
				o.heartbeat = &h
			}
		case "declare":
			o.declare = parseBool(key, value)
		default: // other options (1.0's address, credit, a driver's own) do not apply here
		}
	}
	o.routingKey = o.queue
	if routingKey != nil {
		o.routingKey = *routingKey
	}
	return o
}

type link struct {
	conn *amqp.Connection
	ch   *amqp.Channel
}

func open(o options) link {
	var conn *amqp.Connection
	var err error
	if o.heartbeat != nil {
		conn, err = amqp.DialConfig(o.url, amqp.Config{Heartbeat: *o.heartbeat, Locale: "en_US"})
	} else {
		conn, err = amqp.Dial(o.url)
	}
	if err != nil {
		fail(err)
	}
	emit("connected")
	step("running "+o.workload, 0)
	ch, err := conn.Channel()
	if err != nil {
		fail(err)
	}
	return link{conn, ch}
}

func (l link) close() {
	step("closing", 0)
	must(l.ch.Close())
	must(l.conn.Close())
	emit("closed", field{"by", "client"})
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func declare(o options, ch *amqp.Channel) {
	if o.declare {
		_, err := ch.QueueDeclare(o.queue, false, false, false, false, nil)
		must(err)
	}
}

func publishing(o options) amqp.Publishing {
	p := amqp.Publishing{Body: []byte(o.body)}
	if o.persistent {
		p.DeliveryMode = amqp.Persistent
	}
	return p
}

func delivered(n int, d amqp.Delivery) {
	emit("delivered", field{"n", n}, field{"body", strings.ToValidUTF8(string(d.Body), "\uFFFD")},
		field{"redelivered", d.Redelivered})
}

func publish(o options, l link, msg amqp.Publishing, n int) {
	step(fmt.Sprintf("publishing message %d", n), 0)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	must(l.ch.PublishWithContext(ctx, o.exchange, o.routingKey, false, false, msg))
	emit("published", field{"n", n})
}

func wPublish(o options, tx bool) {
	l := open(o)
	declare(o, l.ch)
	if tx {
		must(l.ch.Tx())
	}
	for n := 1; n <= o.count; n++ {
		publish(o, l, publishing(o), n)
	}
	if tx {
		step("waiting for tx.commit-ok", 0)
		must(l.ch.TxCommit())
	}
	l.close()
}

func wConfirm(o options) {
	l := open(o)
	declare(o, l.ch)
	must(l.ch.Confirm(false))
	confirms := l.ch.NotifyPublish(make(chan amqp.Confirmation, 1))
	for n := 1; n <= o.count; n++ {
		publish(o, l, publishing(o), n)
		step(fmt.Sprintf("waiting for the confirm of message %d", n), 0)
		c, ok := <-confirms
		if !ok {
			fail(errors.New("the channel closed before the confirm"))
		}
		emit("confirmed", field{"n", n}, field{"ack", c.Ack})
	}
	l.close()
}

func wConsume(o options) {
	l := open(o)
	declare(o, l.ch)
	if o.prefetch > 0 {
		must(l.ch.Qos(o.prefetch, 0, false))
	}
	deliveries, err := l.ch.Consume(o.queue, "amqpspec", !o.ack, false, false, false, nil)
	must(err)
	for n := 1; n <= o.count; n++ {
		step(fmt.Sprintf("waiting for delivery %d", n), 0)
		d, ok := <-deliveries
		if !ok {
			fail(errors.New("the delivery channel closed (consumer cancelled or channel closed)"))
		}
		delivered(n, d)
		if o.ack {
			must(d.Ack(false))
		}
	}
	step("cancelling the consumer", 0)
	must(l.ch.Cancel("amqpspec", false))
	l.close()
}

func wGet(o options) {
	l := open(o)
	declare(o, l.ch)
	n := 0
	for i := 1; i <= o.count; i++ {
		step(fmt.Sprintf("waiting for the answer to basic.get %d", i), 0)
		d, ok, err := l.ch.Get(o.queue, !o.ack)
		must(err)
		if !ok {
			emit("empty")
			continue
		}
		n++
		delivered(n, d)
		if o.ack {
			must(d.Ack(false))
		}
	}
	l.close()
}

func wRPC(o options) {
	l := open(o)
	q, err := l.ch.QueueDeclare("", false, false, true, false, nil)
	must(err)
	replies, err := l.ch.Consume(q.Name, "", true, false, false, false, nil)
	must(err)
	msg := publishing(o)
	msg.ReplyTo = q.Name
	msg.CorrelationId = "amqpspec-1"
	publish(o, l, msg, 1)
	step("waiting for the reply", 0)
	d, ok := <-replies
	if !ok {
		fail(errors.New("the reply consumer ended before a reply"))
	}
	delivered(1, d)
	l.close()
}

func wIdle(o options) {
	l := open(o)
	rest()
	closed := l.conn.NotifyClose(make(chan *amqp.Error, 1))
	select { // the library sends heartbeats by itself meanwhile
	case <-time.After(o.timeout):
	case err := <-closed:
		if err != nil {
			fail(err)
		}
	}
	l.close()
}

func main() {
	o := parseArgs(os.Args[1:])
	dogLimit = o.timeout
	workloads := map[string]func(options){
		"connect": func(o options) { open(o).close() },
		"publish": func(o options) { wPublish(o, false) },
		"tx":      func(o options) { wPublish(o, true) },
		"confirm": wConfirm,
		"consume": wConsume,
		"get":     wGet,
		"rpc":     wRPC,
		"idle":    wIdle,
	}
	run, ok := workloads[o.workload]
	if !ok {
		emit("unsupported", field{"workload", o.workload})
		os.Exit(exitUnsupported)
	}
	step("opening the connection", 0)
	run(o)
	emit("done")
	os.Exit(exitDone)
}
