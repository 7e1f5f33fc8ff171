/*
 * amqpspec driver for Qpid Proton C (Debian libqpid-proton11-dev), AMQP 1.0;
 * contract: docs/drivers.md.
 *
 * Written as Proton's C examples are: one proactor, one connection, an event loop that reacts
 * to PN_CONNECTION_INIT, PN_LINK_FLOW, PN_DELIVERY and the remote-close events. Proton C grants
 * no credit by itself: the receiver grants `credit` (default: `count`) and tops it up by one for
 * each message it takes, so `credit` is the window the broker sees. pn_proactor_set_timeout is
 * the driver's own deadline for each wait (the contract's `timeout` option); for `idle` it is
 * the time the driver sits.
 */
#include <proton/condition.h>
#include <proton/connection.h>
#include <proton/delivery.h>
#include <proton/link.h>
#include <proton/message.h>
#include <proton/proactor.h>
#include <proton/sasl.h>
#include <proton/session.h>
#include <proton/terminus.h>
#include <proton/transport.h>

#include "../_lib/driverlib.h"

typedef struct {
  char host[256], port[16], user[256], password[256];
  bool has_user, has_password;
  const char *workload, *address, *body;
  long count, credit;
  bool ack, persistent, has_credit;
  pn_millis_t timeout_ms, heartbeat_ms;
  bool has_heartbeat;
  const char *url;
} options_t;

typedef struct {
  options_t o;
  pn_proactor_t *proactor;
  pn_connection_t *connection;
  pn_session_t *session;
  pn_link_t *sender, *receiver;
  pn_message_t *message;
  pn_rwbytes_t out;          /* encode buffer for pn_message_send */
  pn_rwbytes_t in;           /* bytes of the delivery being received */
  long sent, settled, received;
  bool closing;              /* the driver started the close */
  bool ending_session;       /* connect: the driver ended its session */
  bool idling;
  bool failed;               /* an error event was printed */
  char reply_to[512];
} app_t;

static void emit_error(app_t *app, const char *type, const char *message) {
  if (app->failed) return; /* one error event: the first cause */
  app->failed = true;
  printf("{\"event\":\"error\",\"type\":");
  put_text(type);
  printf(",\"message\":");
  put_text(message);
  printf("}\n");
  fflush(stdout);
}

static void emit_server_close(app_t *app, const char *scope, pn_condition_t *cond) {
  const char *name = pn_condition_is_set(cond) ? pn_condition_get_name(cond) : "";
  const char *text = pn_condition_is_set(cond) ? pn_condition_get_description(cond) : "";
  printf("{\"event\":\"closed\",\"by\":\"server\",\"scope\":\"%s\",\"condition\":", scope);
  put_text(name);
  printf(",\"text\":");
  put_text(text ? text : "");
  printf("}\n");
  fflush(stdout);
  char message[1024];
  snprintf(message, sizeof message, "the peer closed the %s: %s", scope, (text && *text) ? text : (*name ? name : "no error given"));
  emit_error(app, *name ? name : "AmqpError", message);
}

/* amqp://[user[:password]@]host[:port][/...]; amqps is not built into this driver */
static void parse_url(options_t *o, const char *url) {
  const char *rest;
  if (!strncmp(url, "amqp://", 7)) rest = url + 7;
  else if (!strncmp(url, "amqps://", 8)) usage_error("amqps:// is not supported by the proton-c driver");
  else usage_error("the URL must be amqp://host[:port]/");
  const char *end = rest + strcspn(rest, "/?#");
  const char *at = NULL;
  for (const char *p = rest; p < end; p++)
    if (*p == '@') at = p;
  const char *hostpart = rest;
  if (at) {
    const char *colon = memchr(rest, ':', (size_t)(at - rest));
    size_t ulen = (size_t)((colon ? colon : at) - rest);
    percent_decode(o->user, sizeof o->user, rest, ulen);
    o->has_user = true;
    if (colon) {
      percent_decode(o->password, sizeof o->password, colon + 1, (size_t)(at - colon - 1));
      o->has_password = true;
    }
    hostpart = at + 1;
  }
  const char *colon = memchr(hostpart, ':', (size_t)(end - hostpart));
  size_t hlen = (size_t)((colon ? colon : end) - hostpart);
  if (hlen == 0 || hlen >= sizeof o->host) usage_error("the URL has no host");
  memcpy(o->host, hostpart, hlen);
  o->host[hlen] = 0;
  if (colon) {
    size_t plen = (size_t)(end - colon - 1);
    if (plen == 0 || plen >= sizeof o->port) usage_error("the URL's port is not valid");
    memcpy(o->port, colon + 1, plen);
    o->port[plen] = 0;
  } else {
    strcpy(o->port, "5672");
  }
}

static void parse_args(options_t *o, int argc, char **argv) {
  if (argc < 3) usage_error("usage: driver URL WORKLOAD [key=value ...]; workloads: connect, send, receive, rpc, idle");
  memset(o, 0, sizeof *o);
  o->url = argv[1];
  secret_url = argv[1];
  o->workload = argv[2];
  o->address = NULL;
  const char *queue = "amqpspec-q";
  o->body = "hello";
  o->count = 1;
  o->ack = true;
  o->timeout_ms = 5000;
  for (int i = 3; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq || eq == argv[i]) {
      char m[300];
      snprintf(m, sizeof m, "option %.200s is not key=value", argv[i]);
      usage_error(m);
    }
    *eq = 0;
    const char *k = argv[i], *v = eq + 1;
    if (!strcmp(k, "queue")) queue = v;
    else if (!strcmp(k, "address")) o->address = v;
    else if (!strcmp(k, "count")) o->count = parse_long(k, v);
    else if (!strcmp(k, "body")) o->body = v;
    else if (!strcmp(k, "ack")) o->ack = parse_bool(k, v);
    else if (!strcmp(k, "persistent")) o->persistent = parse_bool(k, v);
    else if (!strcmp(k, "timeout")) o->timeout_ms = (pn_millis_t)parse_ms(k, v);
    else if (!strcmp(k, "heartbeat") && *v) { o->heartbeat_ms = (pn_millis_t)parse_ms(k, v); o->has_heartbeat = true; }
    else if (!strcmp(k, "credit") && *v) { o->credit = parse_long(k, v); o->has_credit = true; }
    /* other options (0-9-1's, a driver's own) do not apply here */
  }
  if (!o->address) o->address = queue;
  parse_url(o, o->url);
  if (o->has_password && o->password[0]) secret_password = o->password;
}

/* --- the workloads --------------------------------------------------------------------------- */

static void step(app_t *app) { pn_proactor_set_timeout(app->proactor, app->o.timeout_ms); }

static void close_connection(app_t *app) {
  app->closing = true;
  step(app);
  pn_connection_close(app->connection);
}

static bool send_one(app_t *app, pn_link_t *sender, const char *reply_to) {
  long n = app->sent + 1;
  pn_delivery(sender, pn_dtag((const char *)&n, sizeof n));
  pn_message_clear(app->message);
  pn_data_t *body = pn_message_body(app->message);
  pn_data_put_string(body, pn_bytes(strlen(app->o.body), app->o.body));
  pn_message_set_durable(app->message, app->o.persistent);
  if (reply_to) {
    pn_message_set_reply_to(app->message, reply_to);
    pn_message_set_correlation_id(app->message, (pn_atom_t){.type = PN_STRING, .u.as_bytes = pn_bytes(10, "amqpspec-1")});
  }
  if (pn_message_send(app->message, sender, &app->out) < 0) {
    emit_error(app, "ProtonError", pn_error_text(pn_message_error(app->message)));
    close_connection(app);
    return false;
  }
  app->sent = n;
  emit_n("published", n);
  return true;
}

static void open_links(app_t *app) {
  const options_t *o = &app->o;
  app->session = pn_session(app->connection);
  pn_session_open(app->session);
  if (!strcmp(o->workload, "send")) {
    app->sender = pn_sender(app->session, "amqpspec-sender");
    pn_terminus_set_address(pn_link_target(app->sender), o->address);
    pn_link_open(app->sender);
  } else if (!strcmp(o->workload, "receive")) {
    app->receiver = pn_receiver(app->session, "amqpspec-receiver");
    pn_terminus_set_address(pn_link_source(app->receiver), o->address);
    pn_link_open(app->receiver);
    long credit = o->has_credit ? o->credit : o->count;
    if (credit > 0) pn_link_flow(app->receiver, (int)credit);
  } else if (!strcmp(o->workload, "rpc")) {
    app->receiver = pn_receiver(app->session, "amqpspec-replies");
    pn_terminus_set_dynamic(pn_link_source(app->receiver), true);
    pn_link_open(app->receiver); /* the sender follows once the broker names the reply node */
  }
}

/* A complete incoming message: report it, accept it (ack=true), close after `count`. */
static void take_message(app_t *app, pn_delivery_t *d) {
  pn_link_t *l = pn_delivery_link(d);
  pn_message_clear(app->message);
  int err = pn_message_decode(app->message, app->in.start, app->in.size);
  free(app->in.start);
  app->in = pn_rwbytes_null;
  if (err) {
    emit_error(app, "ProtonError", "a message that does not decode");
    close_connection(app);
    return;
  }
  pn_data_t *body = pn_message_body(app->message);
  pn_data_rewind(body);
  pn_bytes_t text = pn_bytes(0, "");
  if (pn_data_next(body)) {
    switch (pn_data_type(body)) {
      case PN_STRING: text = pn_data_get_string(body); break;
      case PN_BINARY: text = pn_data_get_binary(body); break;
      case PN_SYMBOL: text = pn_data_get_symbol(body); break;
      default: break;
    }
  }
  long n = ++app->received;
  printf("{\"event\":\"delivered\",\"n\":%ld,\"body\":", n);
  put_json_string(text.start, text.size);
  printf(",\"redelivered\":%s}\n", pn_message_get_delivery_count(app->message) > 0 ? "true" : "false");
  fflush(stdout);
  if (app->o.ack) {
    pn_delivery_update(d, PN_ACCEPTED);
    pn_delivery_settle(d);
  }
  long wanted = !strcmp(app->o.workload, "rpc") ? 1 : app->o.count;
  if (n >= wanted) close_connection(app);
  else if (app->o.has_credit) pn_link_flow(l, 1); /* keep the window at `credit` */
  if (!app->closing) step(app);
}

static void on_delivery(app_t *app, pn_delivery_t *d) {
  pn_link_t *l = pn_delivery_link(d);
  if (pn_link_is_sender(l)) {
    if (!pn_delivery_updated(d) || !pn_delivery_remote_state(d)) return;
    uint64_t state = pn_delivery_remote_state(d);
    long n = ++app->settled;
    printf("{\"event\":\"confirmed\",\"n\":%ld,\"ack\":%s}\n", n, state == PN_ACCEPTED ? "true" : "false");
    fflush(stdout);
    pn_delivery_settle(d);
    if (!strcmp(app->o.workload, "send") && n >= app->o.count) close_connection(app);
    else step(app);
    return;
  }
  if (!pn_delivery_readable(d)) return;
  size_t pending = pn_delivery_pending(d);
  if (app->in.size + pending > 64 * 1024 * 1024) { /* bounded: a hostile peer cannot exhaust us */
    emit_error(app, "ProtonError", "an incoming message larger than 64 MiB");
    close_connection(app);
    return;
  }
  char *grown = realloc(app->in.start, app->in.size + pending + 1);
  if (!grown) { emit_error(app, "ProtonError", "out of memory"); close_connection(app); return; }
  app->in.start = grown;
  ssize_t got = pn_link_recv(l, app->in.start + app->in.size, pending);
  if (got == PN_ABORTED) {
    free(app->in.start);
    app->in = pn_rwbytes_null;
    pn_delivery_settle(d);
    pn_link_flow(l, 1);
    return;
  }
  if (got > 0) app->in.size += (size_t)got;
  if (!pn_delivery_partial(d)) take_message(app, d);
}

static void on_flow(app_t *app, pn_link_t *l) {
  if (l == app->sender && !strcmp(app->o.workload, "send")) {
    while (pn_link_credit(l) > 0 && app->sent < app->o.count)
      if (!send_one(app, l, NULL)) return;
    step(app);
  } else if (l == app->sender && !strcmp(app->o.workload, "rpc") && app->sent == 0 && pn_link_credit(l) > 0) {
    send_one(app, l, app->reply_to);
    step(app);
  }
}

static void on_remote_open(app_t *app, pn_event_t *e) {
  switch (pn_event_type(e)) {
    case PN_CONNECTION_REMOTE_OPEN:
      emit_simple("connected");
      step(app);
      if (!strcmp(app->o.workload, "idle")) {
        app->idling = true;
        pn_proactor_set_timeout(app->proactor, app->o.timeout_ms); /* then the close */
      } else {
        open_links(app);
      }
      break;
    case PN_SESSION_REMOTE_OPEN:
      if (!strcmp(app->o.workload, "connect")) {
        app->ending_session = true;
        pn_session_close(app->session);
      }
      break;
    case PN_LINK_REMOTE_OPEN: {
      pn_link_t *l = pn_event_link(e);
      if (l == app->receiver && !strcmp(app->o.workload, "rpc")) {
        const char *addr = pn_terminus_get_address(pn_link_remote_source(l));
        if (!addr || !*addr) {
          emit_error(app, "ProtonError", "the peer attached the dynamic receiver without an address");
          close_connection(app);
          break;
        }
        snprintf(app->reply_to, sizeof app->reply_to, "%s", addr);
        pn_link_flow(l, 1);
        app->sender = pn_sender(app->session, "amqpspec-requests");
        pn_terminus_set_address(pn_link_target(app->sender), app->o.address);
        pn_link_open(app->sender);
      }
      step(app);
      break;
    }
    default: break;
  }
}

/* false: the proactor is inactive, the run is over */
static bool handle(app_t *app, pn_event_t *e) {
  switch (pn_event_type(e)) {
    case PN_CONNECTION_INIT: {
      pn_connection_t *c = pn_event_connection(e);
      pn_connection_set_container(c, "amqpspec-proton-c");
      pn_connection_open(c);
      break;
    }
    case PN_CONNECTION_REMOTE_OPEN:
    case PN_SESSION_REMOTE_OPEN:
    case PN_LINK_REMOTE_OPEN:
      on_remote_open(app, e);
      break;
    case PN_LINK_FLOW:
      on_flow(app, pn_event_link(e));
      break;
    case PN_DELIVERY:
      on_delivery(app, pn_event_delivery(e));
      break;
    case PN_SESSION_REMOTE_CLOSE:
      if (app->ending_session && !app->closing) {
        close_connection(app); /* connect: our end was answered; now close */
      } else if (!app->closing) {
        emit_server_close(app, "session", pn_session_remote_condition(pn_event_session(e)));
        close_connection(app);
      }
      break;
    case PN_LINK_REMOTE_CLOSE:
    case PN_LINK_REMOTE_DETACH:
      if (!app->closing) {
        pn_link_t *l = pn_event_link(e);
        emit_server_close(app, pn_link_is_sender(l) ? "sender" : "receiver", pn_link_remote_condition(l));
        close_connection(app);
      }
      break;
    case PN_CONNECTION_REMOTE_CLOSE:
      if (app->closing) {
        if (!app->failed) { /* after an error event, the error stays the last line */
          printf("{\"event\":\"closed\",\"by\":\"client\"}\n");
          fflush(stdout);
        }
      } else {
        emit_server_close(app, "connection", pn_connection_remote_condition(pn_event_connection(e)));
        app->closing = true;
        pn_connection_close(pn_event_connection(e));
      }
      break;
    case PN_TRANSPORT_CLOSED: {
      pn_condition_t *cond = pn_transport_condition(pn_event_transport(e));
      if (pn_condition_is_set(cond)) {
        emit_error(app, pn_condition_get_name(cond), pn_condition_get_description(cond));
      } else if (!app->closing) {
        emit_error(app, "ProtonError", "the connection ended before the workload did");
      }
      pn_proactor_cancel_timeout(app->proactor);
      break;
    }
    case PN_PROACTOR_TIMEOUT:
      if (app->idling) {
        app->idling = false;
        close_connection(app);
      } else if (!app->failed) {
        char m[128];
        snprintf(m, sizeof m, "no answer within %g s", app->o.timeout_ms / 1000.0);
        emit_error(app, "Timeout", m);
        app->closing = true;
        pn_proactor_disconnect(app->proactor, NULL);
      }
      break;
    case PN_PROACTOR_INACTIVE:
      return false;
    default:
      break;
  }
  return true;
}

int main(int argc, char **argv) {
  app_t app;
  memset(&app, 0, sizeof app);
  parse_args(&app.o, argc, argv);
  const char *w = app.o.workload;
  if (strcmp(w, "connect") && strcmp(w, "send") && strcmp(w, "receive") && strcmp(w, "rpc") && strcmp(w, "idle")) {
    printf("{\"event\":\"unsupported\",\"workload\":");
    put_text(w);
    printf("}\n");
    fflush(stdout);
    return EXIT_UNSUPPORTED;
  }
  app.message = pn_message();
  app.proactor = pn_proactor();
  app.connection = pn_connection();
  pn_transport_t *transport = pn_transport();
  pn_sasl_t *sasl = pn_sasl(transport);
  if (app.o.has_user) {
    pn_connection_set_user(app.connection, app.o.user);
    if (app.o.has_password) pn_connection_set_password(app.connection, app.o.password);
    pn_sasl_set_allow_insecure_mechs(sasl, true); /* PLAIN on a loopback broker without TLS */
  }
  if (app.o.has_heartbeat) pn_transport_set_idle_timeout(transport, app.o.heartbeat_ms);
  char addr[PN_MAX_ADDR];
  pn_proactor_addr(addr, sizeof addr, app.o.host, app.o.port);
  pn_proactor_connect2(app.proactor, app.connection, transport, addr);
  step(&app);
  bool running = true;
  while (running) {
    pn_event_batch_t *batch = pn_proactor_wait(app.proactor);
    for (pn_event_t *e = pn_event_batch_next(batch); e; e = pn_event_batch_next(batch))
      if (!handle(&app, e)) running = false;
    pn_proactor_done(app.proactor, batch);
  }
  pn_proactor_free(app.proactor);
  pn_message_free(app.message);
  free(app.out.start);
  free(app.in.start);
  if (app.failed) return EXIT_ERROR;
  emit_simple("done");
  return EXIT_DONE;
}
