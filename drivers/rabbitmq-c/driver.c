/*
 * amqpspec driver for rabbitmq-c (Debian librabbitmq-dev), AMQP 0-9-1; contract: docs/drivers.md.
 *
 * Written as rabbitmq-c's examples are: amqp_parse_url, a TCP socket, amqp_login, channel 1,
 * amqp_basic_publish, amqp_basic_get + amqp_read_message, amqp_basic_consume +
 * amqp_consume_message, amqp_get_rpc_reply after each synchronous call. rabbitmq-c does I/O
 * (heartbeats too) only inside the application's calls: `idle` loops on amqp_consume_message
 * with a short timeout, as a rabbitmq-c consumer does. Its handshake and RPC timeouts are the
 * contract's `timeout`; alarm() backs them for waits without one.
 */
#include <amqp.h>
#include <amqp_tcp_socket.h>

#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../_lib/driverlib.h"

typedef struct {
  const char *url, *workload, *queue, *exchange, *routing_key, *body;
  long count, prefetch;
  bool ack, persistent, declare;
  unsigned long timeout_ms;
  long heartbeat; /* seconds; -1: library default (none) */
} options_t;

static options_t o;
static amqp_connection_state_t conn;

/* --- errors --------------------------------------------------------------------------------- */

static void emit_error(const char *type, const char *message) {
  printf("{\"event\":\"error\",\"type\":");
  put_text(type);
  printf(",\"message\":");
  put_text(message);
  printf("}\n");
  fflush(stdout);
}

static void fail(const char *type, const char *message) {
  emit_error(type, message);
  exit(EXIT_ERROR);
}

/* rabbitmq-c leaves the answer to a server's close to the application; its documentation
   (amqp_simple_rpc in amqp.h) says the client sends channel.close-ok / connection.close-ok.
   After a channel's close-ok the driver closes its connection as an application would. */
static void answer_close(amqp_method_number_t id) {
  if (id == AMQP_CHANNEL_CLOSE_METHOD) {
    amqp_channel_close_ok_t ok;
    memset(&ok, 0, sizeof ok);
    if (amqp_send_method(conn, 1, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok) == AMQP_STATUS_OK)
      amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
  } else if (id == AMQP_CONNECTION_CLOSE_METHOD) {
    amqp_connection_close_ok_t ok;
    memset(&ok, 0, sizeof ok);
    amqp_send_method(conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
  }
}

/* The server's close (its code and text), or the library's error, then exit 1. */
static void fail_reply(amqp_rpc_reply_t r, const char *what) {
  char message[1200];
  switch (r.reply_type) {
    case AMQP_RESPONSE_SERVER_EXCEPTION: {
      const char *scope = NULL;
      int code = 0;
      amqp_bytes_t text = {0, NULL};
      if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
        amqp_connection_close_t *m = (amqp_connection_close_t *)r.reply.decoded;
        scope = "connection", code = m->reply_code, text = m->reply_text;
      } else if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        amqp_channel_close_t *m = (amqp_channel_close_t *)r.reply.decoded;
        scope = "channel", code = m->reply_code, text = m->reply_text;
      }
      if (scope) {
        answer_close(r.reply.id);
        printf("{\"event\":\"closed\",\"by\":\"server\",\"scope\":\"%s\",\"code\":%d,\"text\":", scope, code);
        put_json_string(text.bytes ? (const char *)text.bytes : "", text.len);
        printf("}\n");
        snprintf(message, sizeof message, "%s: the server closed the %s: %d %.*s", what, scope, code,
                 (int)(text.len > 900 ? 900 : text.len), text.bytes ? (const char *)text.bytes : "");
        fail("ServerException", message);
      }
      snprintf(message, sizeof message, "%s: unexpected method 0x%08x from the server", what, (unsigned)r.reply.id);
      fail("ServerException", message);
      break;
    }
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      snprintf(message, sizeof message, "%s: %s", what, amqp_error_string2(r.library_error));
      fail(r.library_error == AMQP_STATUS_TIMEOUT ? "Timeout" : "LibraryException", message);
      break;
    case AMQP_RESPONSE_NONE:
      snprintf(message, sizeof message, "%s: no reply", what);
      fail("LibraryException", message);
      break;
    default:
      break;
  }
}

static void check(amqp_rpc_reply_t r, const char *what) {
  if (r.reply_type != AMQP_RESPONSE_NORMAL) fail_reply(r, what);
}

static void check_status(int status, const char *what) {
  if (status < 0) {
    char message[512];
    snprintf(message, sizeof message, "%s: %s", what, amqp_error_string2(status));
    fail(status == AMQP_STATUS_TIMEOUT ? "Timeout" : "LibraryException", message);
  }
}

/* The driver's own deadline (the contract's `timeout`), for waits the library has none for. */
static const char *volatile current_step = "opening the connection";

static void on_alarm(int sig) {
  (void)sig;
  static const char head[] = "{\"event\":\"error\",\"type\":\"Timeout\",\"message\":\"no answer in time while ";
  const char *s = current_step;
  ssize_t ignored = write(STDOUT_FILENO, head, sizeof head - 1);
  ignored = write(STDOUT_FILENO, s, strlen(s));
  ignored = write(STDOUT_FILENO, "\"}\n", 3);
  (void)ignored;
  _exit(EXIT_ERROR);
}

static void step(const char *what) {
  current_step = what;
  alarm((unsigned)((o.timeout_ms + 999) / 1000) + 1);
}

static struct timeval timeout_tv(unsigned long ms) {
  struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
  return tv;
}

/* --- connection ------------------------------------------------------------------------------ */

static void open_connection(void) {
  char *url = strdup(o.url);
  struct amqp_connection_info info;
  amqp_default_connection_info(&info);
  if (!url || amqp_parse_url(url, &info) != AMQP_STATUS_OK) usage_error("the URL is not a valid amqp:// URL");
  if (info.ssl) usage_error("amqps:// is not supported by the rabbitmq-c driver");
  /* amqp_parse_url reads "amqp://host/" as the vhost "" (the AMQP URI spec); the driver contract
     gives every driver the same URL, and there an empty path is the default vhost "/" */
  if (!info.vhost || !*info.vhost) info.vhost = "/";
  conn = amqp_new_connection();
  amqp_socket_t *socket = amqp_tcp_socket_new(conn);
  if (!socket) fail("LibraryException", "could not create a TCP socket");
  struct timeval tv = timeout_tv(o.timeout_ms);
  amqp_set_handshake_timeout(conn, &tv);
  amqp_set_rpc_timeout(conn, &tv);
  check_status(amqp_socket_open_noblock(socket, info.host, info.port, &tv), "opening the socket");
  check(amqp_login(conn, info.vhost, 0, AMQP_DEFAULT_FRAME_SIZE, o.heartbeat < 0 ? 0 : (int)o.heartbeat,
                   AMQP_SASL_METHOD_PLAIN, info.user, info.password),
        "logging in");
  printf("{\"event\":\"connected\"}\n");
  fflush(stdout);
  step("opening the channel");
  amqp_channel_open(conn, 1);
  check(amqp_get_rpc_reply(conn), "opening the channel");
  free(url);
}

static void close_connection(void) {
  step("closing");
  check(amqp_channel_close(conn, 1, AMQP_REPLY_SUCCESS), "closing the channel");
  check(amqp_connection_close(conn, AMQP_REPLY_SUCCESS), "closing the connection");
  amqp_destroy_connection(conn);
  printf("{\"event\":\"closed\",\"by\":\"client\"}\n");
  fflush(stdout);
}

static void declare_queue(void) {
  if (!o.declare) return;
  amqp_queue_declare(conn, 1, amqp_cstring_bytes(o.queue), 0, 0, 0, 0, amqp_empty_table);
  check(amqp_get_rpc_reply(conn), "declaring the queue");
}

static void publish(long n, amqp_basic_properties_t *props) {
  step("publishing");
  check_status(amqp_basic_publish(conn, 1, amqp_cstring_bytes(o.exchange), amqp_cstring_bytes(o.routing_key), 0, 0,
                                  props, amqp_cstring_bytes(o.body)),
               "publishing");
  emit_n("published", n);
}

static amqp_basic_properties_t properties(void) {
  amqp_basic_properties_t props;
  memset(&props, 0, sizeof props);
  if (o.persistent) {
    props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
    props.delivery_mode = 2;
  }
  return props;
}

static void delivered(long n, amqp_bytes_t body, bool redelivered) {
  printf("{\"event\":\"delivered\",\"n\":%ld,\"body\":", n);
  put_json_string(body.bytes ? (const char *)body.bytes : "", body.len);
  printf(",\"redelivered\":%s}\n", redelivered ? "true" : "false");
  fflush(stdout);
}

/* --- workloads ------------------------------------------------------------------------------- */

/* One delivery, or false when `ms` passed without one. A method frame in its place (a close, a
   cancel) comes back as AMQP_STATUS_UNEXPECTED_STATE; rabbitmq-c's documentation and examples
   read it with amqp_simple_wait_frame and deal with it: a close is answered and ends the run. */
static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static bool consume_one(amqp_envelope_t *envelope, unsigned long ms, const char *what) {
  long deadline = now_ms() + (long)ms; /* other methods in a stream must not extend the wait */
  for (;;) {
    long left = deadline - now_ms();
    if (left <= 0) return false;
    struct timeval tv = timeout_tv((unsigned long)left);
    amqp_maybe_release_buffers(conn);
    amqp_rpc_reply_t r = amqp_consume_message(conn, envelope, &tv, 0);
    if (r.reply_type == AMQP_RESPONSE_NORMAL) return true;
    if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT) return false;
    if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
      amqp_frame_t frame;
      check_status(amqp_simple_wait_frame(conn, &frame), what);
      if (frame.frame_type == AMQP_FRAME_METHOD &&
          (frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD || frame.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD)) {
        amqp_rpc_reply_t closed = {AMQP_RESPONSE_SERVER_EXCEPTION, frame.payload.method, 0};
        fail_reply(closed, what);
      }
      continue; /* another method (basic.cancel, an ack): not a delivery, wait on */
    }
    check(r, what);
  }
}

static void w_publish(bool tx) {
  open_connection();
  declare_queue();
  if (tx) {
    amqp_tx_select(conn, 1);
    check(amqp_get_rpc_reply(conn), "tx.select");
  }
  amqp_basic_properties_t props = properties();
  for (long n = 1; n <= o.count; n++) publish(n, &props);
  if (tx) {
    step("waiting for tx.commit-ok");
    amqp_tx_commit(conn, 1);
    check(amqp_get_rpc_reply(conn), "tx.commit");
  }
  close_connection();
}

static void w_confirm(void) {
  open_connection();
  declare_queue();
  amqp_confirm_select(conn, 1);
  check(amqp_get_rpc_reply(conn), "confirm.select");
  amqp_basic_properties_t props = properties();
  for (long n = 1; n <= o.count; n++) {
    publish(n, &props);
    step("waiting for the confirm");
    for (;;) { /* the next method frame on channel 1 is the confirm (or a close) */
      amqp_frame_t frame;
      struct timeval tv = timeout_tv(o.timeout_ms);
      check_status(amqp_simple_wait_frame_noblock(conn, &frame, &tv), "waiting for the confirm");
      if (frame.frame_type != AMQP_FRAME_METHOD) continue;
      if (frame.payload.method.id == AMQP_BASIC_ACK_METHOD || frame.payload.method.id == AMQP_BASIC_NACK_METHOD) {
        printf("{\"event\":\"confirmed\",\"n\":%ld,\"ack\":%s}\n", n,
               frame.payload.method.id == AMQP_BASIC_ACK_METHOD ? "true" : "false");
        fflush(stdout);
        break;
      }
      if (frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD || frame.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD) {
        amqp_rpc_reply_t r = {AMQP_RESPONSE_SERVER_EXCEPTION, frame.payload.method, 0};
        fail_reply(r, "waiting for the confirm");
      }
    }
  }
  close_connection();
}

static void w_consume(void) {
  open_connection();
  declare_queue();
  if (o.prefetch > 0) {
    amqp_basic_qos(conn, 1, 0, (uint16_t)o.prefetch, 0);
    check(amqp_get_rpc_reply(conn), "basic.qos");
  }
  amqp_basic_consume_ok_t *ok =
      amqp_basic_consume(conn, 1, amqp_cstring_bytes(o.queue), amqp_empty_bytes, 0, !o.ack, 0, amqp_empty_table);
  check(amqp_get_rpc_reply(conn), "basic.consume");
  amqp_bytes_t tag = amqp_bytes_malloc_dup(ok->consumer_tag);
  for (long n = 1; n <= o.count; n++) {
    step("waiting for a delivery");
    amqp_envelope_t envelope;
    if (!consume_one(&envelope, o.timeout_ms, "waiting for a delivery")) fail("Timeout", "waiting for a delivery: request timed out");
    delivered(n, envelope.message.body, envelope.redelivered);
    if (o.ack) check_status(amqp_basic_ack(conn, 1, envelope.delivery_tag, 0), "basic.ack");
    amqp_destroy_envelope(&envelope);
  }
  step("cancelling the consumer");
  amqp_basic_cancel(conn, 1, tag);
  check(amqp_get_rpc_reply(conn), "basic.cancel");
  amqp_bytes_free(tag);
  close_connection();
}

static void w_get(void) {
  open_connection();
  declare_queue();
  long n = 0;
  for (long i = 1; i <= o.count; i++) {
    step("waiting for the answer to basic.get");
    amqp_maybe_release_buffers(conn);
    amqp_rpc_reply_t r = amqp_basic_get(conn, 1, amqp_cstring_bytes(o.queue), !o.ack);
    check(r, "basic.get");
    if (r.reply.id == AMQP_BASIC_GET_EMPTY_METHOD) {
      emit_simple("empty");
      continue;
    }
    amqp_basic_get_ok_t *get_ok = (amqp_basic_get_ok_t *)r.reply.decoded;
    uint64_t delivery_tag = get_ok->delivery_tag;
    bool redelivered = get_ok->redelivered;
    amqp_message_t message;
    check(amqp_read_message(conn, 1, &message, 0), "reading the message");
    delivered(++n, message.body, redelivered);
    amqp_destroy_message(&message);
    if (o.ack) check_status(amqp_basic_ack(conn, 1, delivery_tag, 0), "basic.ack");
  }
  close_connection();
}

static void w_rpc(void) {
  open_connection();
  amqp_queue_declare_ok_t *declared = amqp_queue_declare(conn, 1, amqp_empty_bytes, 0, 0, 1, 1, amqp_empty_table);
  check(amqp_get_rpc_reply(conn), "declaring the reply queue");
  amqp_bytes_t reply_to = amqp_bytes_malloc_dup(declared->queue);
  amqp_basic_consume(conn, 1, reply_to, amqp_empty_bytes, 0, 1, 0, amqp_empty_table);
  check(amqp_get_rpc_reply(conn), "basic.consume");
  amqp_basic_properties_t props = properties();
  props._flags |= AMQP_BASIC_REPLY_TO_FLAG | AMQP_BASIC_CORRELATION_ID_FLAG;
  props.reply_to = reply_to;
  props.correlation_id = amqp_cstring_bytes("amqpspec-1");
  publish(1, &props);
  step("waiting for the reply");
  amqp_envelope_t envelope;
  if (!consume_one(&envelope, o.timeout_ms, "waiting for the reply")) fail("Timeout", "waiting for the reply: request timed out");
  delivered(1, envelope.message.body, envelope.redelivered);
  amqp_destroy_envelope(&envelope);
  amqp_bytes_free(reply_to);
  close_connection();
}

static void w_idle(void) {
  open_connection();
  alarm(0);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed >= (long)o.timeout_ms) break;
    long left = (long)o.timeout_ms - elapsed;
    amqp_envelope_t envelope;
    if (consume_one(&envelope, (unsigned long)(left < 500 ? left : 500), "idle")) amqp_destroy_envelope(&envelope);
  }
  close_connection();
}

static void parse_args(int argc, char **argv) {
  if (argc < 3) usage_error("usage: driver URL WORKLOAD [key=value ...]; workloads: connect, publish, consume, get, rpc, tx, confirm, idle");
  o.url = argv[1];
  secret_url = argv[1];
  o.workload = argv[2];
  o.queue = "amqpspec-q";
  o.exchange = "";
  o.routing_key = NULL;
  o.body = "hello";
  o.count = 1;
  o.ack = true;
  o.timeout_ms = 5000;
  o.heartbeat = -1;
  for (int i = 3; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq || eq == argv[i]) {
      char m[300];
      snprintf(m, sizeof m, "option %.200s is not key=value", argv[i]);
      usage_error(m);
    }
    *eq = 0;
    const char *k = argv[i], *v = eq + 1;
    if (!strcmp(k, "queue")) o.queue = v;
    else if (!strcmp(k, "exchange")) o.exchange = v;
    else if (!strcmp(k, "routing_key")) o.routing_key = v;
    else if (!strcmp(k, "body")) o.body = v;
    else if (!strcmp(k, "count")) o.count = parse_long(k, v);
    else if (!strcmp(k, "prefetch")) o.prefetch = parse_long(k, v);
    else if (!strcmp(k, "ack")) o.ack = parse_bool(k, v);
    else if (!strcmp(k, "persistent")) o.persistent = parse_bool(k, v);
    else if (!strcmp(k, "declare")) o.declare = parse_bool(k, v);
    else if (!strcmp(k, "timeout")) o.timeout_ms = parse_ms(k, v);
    else if (!strcmp(k, "heartbeat") && *v) o.heartbeat = (long)(parse_ms(k, v) / 1000);
    /* 1.0's options or a driver's own: not used here */
  }
  if (!o.routing_key) o.routing_key = o.queue;
  /* the password, to scrub it: between the ':' after the user and the '@' */
  const char *rest = strstr(o.url, "://");
  if (rest) {
    rest += 3;
    const char *at = strchr(rest, '@');
    const char *colon = at ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
    if (colon && at > colon + 1) {
      static char password[256];
      size_t n = (size_t)(at - colon - 1);
      if (n < sizeof password) {
        memcpy(password, colon + 1, n);
        password[n] = 0;
        secret_password = password;
      }
    }
  }
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  const char *w = o.workload;
  signal(SIGALRM, on_alarm);
  signal(SIGPIPE, SIG_IGN); /* a peer that closed the socket is an error, not a signal death */
  step("opening the connection");
  if (!strcmp(w, "connect")) { open_connection(); close_connection(); }
  else if (!strcmp(w, "publish")) w_publish(false);
  else if (!strcmp(w, "tx")) w_publish(true);
  else if (!strcmp(w, "confirm")) w_confirm();
  else if (!strcmp(w, "consume")) w_consume();
  else if (!strcmp(w, "get")) w_get();
  else if (!strcmp(w, "rpc")) w_rpc();
  else if (!strcmp(w, "idle")) w_idle();
  else {
    printf("{\"event\":\"unsupported\",\"workload\":");
    put_text(w);
    printf("}\n");
    fflush(stdout);
    return EXIT_UNSUPPORTED;
  }
  emit_simple("done");
  return EXIT_DONE;
}
