/*
 * What the C drivers share (drivers/proton-c, drivers/rabbitmq-c): the contract's JSON output,
 * password scrubbing and option parsing (docs/drivers.md). Each driver is one translation unit
 * that includes this header once, so the functions are static.
 */
#ifndef AMQPSPEC_DRIVERLIB_H
#define AMQPSPEC_DRIVERLIB_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_DONE = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_UNSUPPORTED = 3 };

/* --- output ------------------------------------------------------------------------------- */

static const char *secret_password = NULL;
static const char *secret_url = NULL;

/* Copy text into buf with the URL and password cut out (libraries echo them in errors). */
static const char *scrub(const char *text, char *buf, size_t size) {
  const char *secrets[2] = {secret_url, secret_password};
  snprintf(buf, size, "%s", text ? text : "");
  for (int i = 0; i < 2; i++) {
    const char *s = secrets[i];
    size_t n = s ? strlen(s) : 0;
    char *hit;
    while (n && (hit = strstr(buf, s)) != NULL) {
      size_t tail = strlen(hit + n);
      memmove(hit + 3, hit + n, tail + 1);
      memcpy(hit, "***", 3);
    }
  }
  return buf;
}

/* Length of a valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static int utf8_len(const unsigned char *p, size_t left) {
  int len = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || (size_t)len > left || (len == 2 && p[0] < 0xC2)) return 0;
  for (int i = 1; i < len; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return len;
}

/* A JSON string of `size` bytes: escapes, invalid UTF-8 as U+FFFD. */
static void put_json_string(const char *s, size_t size) {
  const unsigned char *p = (const unsigned char *)s;
  putchar('"');
  for (size_t i = 0; i < size;) {
    unsigned char c = p[i];
    if (c == '"' || c == '\\') { printf("\\%c", c); i++; continue; }
    if (c < 0x20) { printf("\\u%04x", c); i++; continue; }
    int len = utf8_len(p + i, size - i);
    if (len == 0) { fputs("\xEF\xBF\xBD", stdout); i++; continue; }
    fwrite(p + i, 1, (size_t)len, stdout);
    i += (size_t)len;
  }
  putchar('"');
}

static void put_text(const char *text) {
  char buf[2048];
  scrub(text, buf, sizeof buf);
  put_json_string(buf, strlen(buf));
}

/* --- options -------------------------------------------------------------------------------- */

static void usage_error(const char *message) {
  char buf[1024];
  fprintf(stderr, "driver: error: %s\n", scrub(message, buf, sizeof buf));
  exit(EXIT_USAGE);
}

static bool parse_bool(const char *name, const char *text) {
  if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes") || !strcmp(text, "on")) return true;
  if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no") || !strcmp(text, "off")) return false;
  char m[300];
  snprintf(m, sizeof m, "%s=%.200s is not a boolean (true/false)", name, text);
  usage_error(m);
  return false;
}

static long parse_long(const char *name, const char *text) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (!*text || *end || errno || v < 0 || v > 100000000) {
    char m[300];
    snprintf(m, sizeof m, "%s=%.200s must be a whole number >= 0", name, text);
    usage_error(m);
  }
  return v;
}

static unsigned long parse_ms(const char *name, const char *text) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (!*text || *end || errno || !isfinite(v) || v < 0 || v > 1e6) {
    char m[300];
    snprintf(m, sizeof m, "%s=%.200s must be a finite number of seconds >= 0", name, text);
    usage_error(m);
  }
  return (unsigned long)(v * 1000);
}

/* %XX-decode src[0..n) into dst (user and password of the URL). */
__attribute__((unused)) static void percent_decode(char *dst, size_t size, const char *src, size_t n) {
  size_t j = 0;
  for (size_t i = 0; i < n && j + 1 < size; i++) {
    if (src[i] == '%' && i + 2 < n && isxdigit((unsigned char)src[i + 1]) && isxdigit((unsigned char)src[i + 2])) {
      char hex[3] = {src[i + 1], src[i + 2], 0};
      dst[j++] = (char)strtol(hex, NULL, 16);
      i += 2;
    } else {
      dst[j++] = src[i];
    }
  }
  dst[j] = 0;
}

static void emit_simple(const char *event) { printf("{\"event\":\"%s\"}\n", event); fflush(stdout); }

static void emit_n(const char *event, long n) { printf("{\"event\":\"%s\",\"n\":%ld}\n", event, n); fflush(stdout); }

#endif
