/* A neutral HTTP/1.1 upload sink for the benchmarks: it reads each request head, answers
 * `Expect: 100-continue` with `100 Continue` at once, reads and discards exactly
 * Content-Length bytes (or a chunked body), and answers 200 {"filename":"discarded"} with
 * keep-alive. One thread per connection. It neither parses multipart nor writes to disk, so
 * it measures the clients, not a receiver.
 *
 *   cc -O2 -pthread -o sink bench/sink.c && ./sink PORT
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF (1 << 20)

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Finds a header's value (case-insensitive name) in a head; copies it into out. */
static int header(const char *head, const char *name, char *out, size_t cap) {
    size_t len = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        const char *start = line + 2;
        if (strncasecmp(start, name, len) == 0 && start[len] == ':') {
            const char *v = start + len + 1;
            while (*v == ' ' || *v == '\t') v++;
            size_t n = strcspn(v, "\r\n");
            if (n >= cap) n = cap - 1;
            memcpy(out, v, n);
            out[n] = 0;
            return 1;
        }
    }
    return 0;
}

typedef struct { char *buf; size_t have; size_t used; int fd; } conn_t;

/* Makes at least one more byte available; 0 on EOF or error. */
static int fill(conn_t *c) {
    if (c->used == c->have) c->used = c->have = 0;
    if (c->have == BUF) {
        memmove(c->buf, c->buf + c->used, c->have - c->used);
        c->have -= c->used;
        c->used = 0;
    }
    ssize_t r = read(c->fd, c->buf + c->have, BUF - c->have);
    if (r <= 0) return 0;
    c->have += (size_t)r;
    return 1;
}

static int discard(conn_t *c, unsigned long long n) {
    while (n > 0) {
        if (c->used == c->have && !fill(c)) return -1;
        size_t avail = c->have - c->used;
        size_t take = avail < n ? avail : (size_t)n;
        c->used += take;
        n -= take;
    }
    return 0;
}

static int read_line(conn_t *c, char *out, size_t cap) {
    size_t n = 0;
    for (;;) {
        if (c->used == c->have && !fill(c)) return -1;
        char ch = c->buf[c->used++];
        if (ch == '\n') break;
        if (n + 1 < cap && ch != '\r') out[n++] = ch;
    }
    out[n] = 0;
    return 0;
}

static void *serve(void *arg) {
    conn_t c = { malloc(BUF), 0, 0, (int)(long)arg };
    char head[16384];
    for (;;) {
        size_t n = 0;
        /* Read the head byte by byte from the buffer up to the blank line. */
        for (;;) {
            if (c.used == c.have && !fill(&c)) goto done;
            if (n + 1 >= sizeof head) goto done;
            head[n++] = c.buf[c.used++];
            if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0) break;
        }
        head[n] = 0;
        char value[256];
        if (header(head, "Expect", value, sizeof value) && strcasecmp(value, "100-continue") == 0) {
            if (write_all(c.fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0) goto done;
        }
        if (header(head, "Content-Length", value, sizeof value)) {
            if (discard(&c, strtoull(value, NULL, 10)) < 0) goto done;
        } else if (header(head, "Transfer-Encoding", value, sizeof value) && strcasestr(value, "chunked")) {
            char line[256];
            for (;;) {
                if (read_line(&c, line, sizeof line) < 0) goto done;
                unsigned long long size = strtoull(line, NULL, 16);
                if (size == 0) {
                    do { if (read_line(&c, line, sizeof line) < 0) goto done; } while (line[0]);
                    break;
                }
                if (discard(&c, size + 2) < 0) goto done;
            }
        }
        static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 24\r\n\r\n{\"filename\":\"discarded\"}";
        if (write_all(c.fd, answer, sizeof answer - 1) < 0) goto done;
    }
done:
    close(c.fd);
    free(c.buf);
    return NULL;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    int port = argc > 1 ? atoi(argv[1]) : 0;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int yes = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 128)) { perror("sink"); return 1; }
    socklen_t l = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &l);
    printf("listening on %d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int fd = accept(s, NULL, NULL);
        if (fd < 0) continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_create(&t, &attr, serve, (void *)(long)fd);
        pthread_attr_destroy(&attr);
    }
}
