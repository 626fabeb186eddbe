/* link_emulator.c: the testbed's link, between two TUN devices.
 *
 * Built on first use by latency_model.kernel.emulator (cc -O2); never committed as a binary.
 *
 * It creates one TUN device in each of two network namespaces (given as /proc/PID/ns/net
 * paths), then forwards IPv4 packets between them. Per transfer (keyed by the sender's TCP
 * port) and per direction, a packet of L bytes (IP header included) is serialised at the
 * link rate C after the previous one has left (store and forward: L*8/C seconds) and
 * delivered d seconds after its last bit left, as the simulator's link does (sim/flat.py).
 * Data packets (TCP payload > 0) from the sender are dropped with probability p after their
 * serialisation, or by script (the first transmission of chosen segments); SYNs, pure ACKs
 * and pure FINs are never dropped. Each transfer has its own xoshiro256** stream seeded by
 * the controller, so its losses depend only on its seed and its own packets.
 *
 * Control (stdin, one command a line):
 *   flow PORT SEED P SIZE MSS DROPS   register the transfer whose sender port is PORT;
 *                                     DROPS is "-" or a comma list of 0-based segments
 *   stats                             print and reset the lateness counters
 *   quit
 * Reports (stdout, one a line):
 *   ready
 *   ok PORT
 *   done PORT T_FIRST_NS T_DONE_NS DATA_TX RETX LOST FIRST_LOST FIN_BARE DROPPED
 *                                     (DROPPED: the segment of each dropped transmission, or -)
 *   stats N SUM_NS MAX_NS OVER_100US OVER_1MS
 * Optional packet log (-l FILE): t_ns,port,dir,event,seq,ack,len,flags (seq/ack relative).
 *
 * Times are CLOCK_MONOTONIC. The process asks for SCHED_FIFO and 1 ns timer slack (both
 * optional) and dies with its parent (PR_SET_PDEATHSIG); its TUN devices vanish with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAXPKT 2048
#define MAXQ 65536
#define MAXDROPS 64

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xoshiro256** seeded through splitmix64 */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static double uniform(uint64_t s[4]) {
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return (double)(r >> 11) * 0x1.0p-53;
}

struct flow {
    int registered, have_isn, done, fin_bare;
    uint64_t rng[4];
    double p;
    uint32_t isn, size, mss, snd_max; /* snd_max: highest relative end seq seen, bytes */
    int ndrops;
    uint32_t drops[MAXDROPS];
    uint64_t busy_until[2]; /* per direction, ns */
    uint64_t t_first, t_done;
    uint32_t data_tx, retx, lost, first_lost;
    int ndropped;
    uint32_t dropped[MAXDROPS]; /* segment of each dropped transmission, in order */
};
static struct flow flows[65536];

struct pkt {
    uint64_t due;
    uint64_t order;
    int dir; /* 0: sender->receiver (written to tun b), 1: receiver->sender (tun a) */
    int len;
    int port;
    int done_ack; /* the ACK covering the last byte: report on delivery */
    unsigned char data[MAXPKT];
};
static struct pkt *heap[MAXQ];
static int nheap;
static uint64_t order_counter;

static int before(struct pkt *a, struct pkt *b) {
    return a->due < b->due || (a->due == b->due && a->order < b->order);
}
static void heap_push(struct pkt *p) {
    int i = nheap++;
    heap[i] = p;
    while (i > 0) {
        int up = (i - 1) / 2;
        if (!before(heap[i], heap[up])) break;
        struct pkt *t = heap[i]; heap[i] = heap[up]; heap[up] = t; i = up;
    }
}
static struct pkt *heap_pop(void) {
    struct pkt *top = heap[0];
    heap[0] = heap[--nheap];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < nheap && before(heap[l], heap[m])) m = l;
        if (r < nheap && before(heap[r], heap[m])) m = r;
        if (m == i) break;
        struct pkt *t = heap[i]; heap[i] = heap[m]; heap[m] = t; i = m;
    }
    return top;
}

static uint64_t delay_ns;
static double rate_bps;
static FILE *logf;
static uint64_t late_n, late_sum, late_max, late_100us, late_1ms;
static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int open_tun(const char *nspath, const char *name) {
    int self = open("/proc/self/ns/net", O_RDONLY);
    int ns = open(nspath, O_RDONLY);
    if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET) < 0) { perror(nspath); exit(3); }
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
    if (fd < 0) { perror("/dev/net/tun"); exit(3); }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) { perror("TUNSETIFF"); exit(3); }
    if (setns(self, CLONE_NEWNET) < 0) { perror("setns back"); exit(3); }
    close(ns); close(self);
    return fd;
}

static uint16_t get16(const unsigned char *b) { return (uint16_t)(b[0] << 8 | b[1]); }
static uint32_t get32(const unsigned char *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void log_pkt(uint64_t t, int port, int dir, const char *ev, const unsigned char *d, int len) {
    if (!logf || len < 20 || d[9] != 6) return;
    int ihl = (d[0] & 15) * 4;
    if (len < ihl + 20) return;
    const unsigned char *t4 = d + ihl;
    int doff = (t4[12] >> 4) * 4, payload = len - ihl - doff;
    struct flow *f = &flows[port];
    uint32_t seq = get32(t4 + 4), ack = get32(t4 + 8);
    uint32_t base = f->have_isn ? f->isn + 1 : 0;
    if (dir == 0) seq -= base; else ack -= base;
    fprintf(logf, "%llu,%d,%d,%s,%u,%u,%d,%d\n", (unsigned long long)t, port, dir, ev,
            dir == 0 ? seq : 0u, dir == 1 ? ack : 0u, payload, t4[13]);
}

/* A packet read from the TUN of side `dir` (0: sender side). */
static void on_packet(int dir, unsigned char *d, int len, uint64_t t) {
    if (len < 40 || (d[0] >> 4) != 4 || d[9] != 6) return; /* IPv4 TCP only */
    int ihl = (d[0] & 15) * 4;
    const unsigned char *t4 = d + ihl;
    int doff = (t4[12] >> 4) * 4, flags = t4[13];
    int payload = len - ihl - doff;
    int port = dir == 0 ? get16(t4) : get16(t4 + 2);
    struct flow *f = &flows[port];
    int drop = 0, done_ack = 0;
    if (dir == 0 && (flags & 0x02)) { /* SYN: the initial sequence number */
        f->isn = get32(t4 + 4);
        f->have_isn = 1;
    }
    uint64_t start = t > f->busy_until[dir] ? t : f->busy_until[dir];
    uint64_t ser = (uint64_t)((double)len * 8.0 / rate_bps * 1e9 + 0.5);
    f->busy_until[dir] = start + ser;
    if (f->registered && f->have_isn && dir == 0 && payload > 0) {
        uint32_t rel = get32(t4 + 4) - (f->isn + 1), end = rel + (uint32_t)payload;
        int first = (int32_t)(end - f->snd_max) > 0;
        if (!f->t_first) f->t_first = t;
        if (!first) f->retx++;
        for (int i = 0; first && i < f->ndrops; i++)
            if (rel / f->mss == f->drops[i]) drop = 1;
        if (f->p > 0.0 && uniform(f->rng) < f->p) drop = 1;
        if (first) f->snd_max = end;
        if (drop) {
            if (f->ndropped < MAXDROPS) f->dropped[f->ndropped++] = rel / f->mss;
            f->lost++;
            if (first) f->first_lost++;
        } else {
            f->data_tx++;
        }
    }
    if (f->registered && f->have_isn && dir == 0 && payload == 0 && (flags & 0x01) && !f->done)
        f->fin_bare = 1;
    if (f->registered && f->have_isn && dir == 1 && (flags & 0x10) && !f->done) {
        uint32_t acked = get32(t4 + 8) - (f->isn + 1);
        if ((int32_t)acked >= 0 && acked >= f->size) done_ack = 1;
    }
    log_pkt(t, port, dir, drop ? "drop" : "in", d, len);
    if (drop) return;
    if (nheap >= MAXQ) return; /* cannot happen at these rates; a full queue drops */
    struct pkt *p = malloc(sizeof *p);
    if (!p) return;
    p->due = f->busy_until[dir] + delay_ns;
    p->order = order_counter++;
    p->dir = dir;
    p->len = len;
    p->port = port;
    p->done_ack = done_ack;
    memcpy(p->data, d, (size_t)len);
    heap_push(p);
}

static void command(char *line) {
    unsigned port; unsigned long long seed; double prob; unsigned size, mss; char drops[4096];
    if (sscanf(line, "flow %u %llu %lf %u %u %4095s", &port, &seed, &prob, &size, &mss, drops) == 6
        && port < 65536 && mss > 0) {
        struct flow *f = &flows[port];
        memset(f, 0, sizeof *f);
        uint64_t x = seed;
        for (int i = 0; i < 4; i++) f->rng[i] = splitmix64(&x);
        f->p = prob; f->size = size; f->mss = mss; f->registered = 1;
        if (strcmp(drops, "-") != 0) {
            char *save = NULL;
            for (char *tok = strtok_r(drops, ",", &save); tok && f->ndrops < MAXDROPS;
                 tok = strtok_r(NULL, ",", &save))
                f->drops[f->ndrops++] = (uint32_t)strtoul(tok, NULL, 10);
        }
        printf("ok %u\n", port);
    } else if (strncmp(line, "stats", 5) == 0) {
        printf("stats %llu %llu %llu %llu %llu\n", (unsigned long long)late_n, (unsigned long long)late_sum,
               (unsigned long long)late_max, (unsigned long long)late_100us, (unsigned long long)late_1ms);
        late_n = late_sum = late_max = late_100us = late_1ms = 0;
        if (logf) fflush(logf);
    } else if (strncmp(line, "quit", 4) == 0) {
        stop = 1;
    } else {
        printf("error %s\n", line);
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *ns_a = NULL, *ns_b = NULL, *name_a = "lmk0", *name_b = "lmk0", *logpath = NULL;
    double delay_s = 0.05;
    rate_bps = 100e6;
    int opt;
    while ((opt = getopt(argc, argv, "a:b:A:B:d:r:l:")) != -1) {
        switch (opt) {
        case 'a': ns_a = optarg; break;
        case 'b': ns_b = optarg; break;
        case 'A': name_a = optarg; break;
        case 'B': name_b = optarg; break;
        case 'd': delay_s = atof(optarg); break;
        case 'r': rate_bps = atof(optarg); break;
        case 'l': logpath = optarg; break;
        default: fprintf(stderr, "usage: link_emulator -a NS -b NS [-d s] [-r bps] [-l log]\n"); return 2;
        }
    }
    if (!ns_a || !ns_b || !(rate_bps > 0) || !(delay_s >= 0)) {
        fprintf(stderr, "link_emulator: -a and -b (namespace paths) are required\n");
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) return 1; /* the parent died before prctl */
    prctl(PR_SET_TIMERSLACK, 1UL);
    struct sched_param sp = {.sched_priority = 10};
    int fifo = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    delay_ns = (uint64_t)(delay_s * 1e9 + 0.5);
    if (logpath) {
        logf = fopen(logpath, "w");
        if (!logf) { perror(logpath); return 3; }
        fprintf(logf, "t_ns,port,dir,event,seq,ack,len,flags\n");
    }
    int fd[2] = {open_tun(ns_a, name_a), open_tun(ns_b, name_b)};
    printf("ready %d\n", fifo);
    fflush(stdout);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    char cmdbuf[65536];
    size_t cmdlen = 0;
    unsigned char buf[MAXPKT];
    while (!stop) {
        struct pollfd pfd[3] = {{fd[0], POLLIN, 0}, {fd[1], POLLIN, 0}, {0, POLLIN, 0}};
        struct timespec ts, *tsp = NULL;
        if (nheap) {
            uint64_t t = now_ns(), due = heap[0]->due;
            uint64_t wait = due > t ? due - t : 0;
            ts.tv_sec = (time_t)(wait / 1000000000ull);
            ts.tv_nsec = (long)(wait % 1000000000ull);
            tsp = &ts;
        }
        int n = ppoll(pfd, 3, tsp, NULL);
        if (n < 0 && errno != EINTR) { perror("ppoll"); break; }
        uint64_t t = now_ns();
        for (int s = 0; s < 2; s++) {
            if (!(pfd[s].revents & POLLIN)) continue;
            for (;;) {
                ssize_t r = read(fd[s], buf, sizeof buf);
                if (r <= 0) break;
                on_packet(s, buf, (int)r, t);
                t = now_ns();
            }
        }
        if (pfd[2].revents & (POLLIN | POLLHUP)) {
            ssize_t r = read(0, cmdbuf + cmdlen, sizeof cmdbuf - 1 - cmdlen);
            if (r == 0) break; /* the controller closed our stdin: done */
            if (r > 0) {
                cmdlen += (size_t)r;
                char *nl;
                while ((nl = memchr(cmdbuf, '\n', cmdlen)) != NULL) {
                    *nl = 0;
                    command(cmdbuf);
                    size_t rest = cmdlen - (size_t)(nl + 1 - cmdbuf);
                    memmove(cmdbuf, nl + 1, rest);
                    cmdlen = rest;
                }
                if (cmdlen >= sizeof cmdbuf - 1) cmdlen = 0;
            }
        }
        t = now_ns();
        while (nheap && heap[0]->due <= t) {
            struct pkt *p = heap_pop();
            /* dir 0 came from side a: written to side b; dir 1 to side a */
            ssize_t w = write(fd[p->dir == 0 ? 1 : 0], p->data, (size_t)p->len);
            uint64_t tw = now_ns(), late = tw - p->due;
            late_n++; late_sum += late;
            if (late > late_max) late_max = late;
            if (late > 100000) late_100us++;
            if (late > 1000000) late_1ms++;
            log_pkt(tw, p->port, p->dir, w < 0 ? "wfail" : "out", p->data, p->len);
            struct flow *f = &flows[p->port];
            if (p->done_ack && !f->done && w >= 0) {
                f->done = 1;
                f->t_done = tw;
                printf("done %d %llu %llu %u %u %u %u %d ", p->port, (unsigned long long)f->t_first,
                       (unsigned long long)f->t_done, f->data_tx + f->lost, f->retx, f->lost, f->first_lost,
                       f->fin_bare);
                for (int i = 0; i < f->ndropped; i++) printf(i ? ",%u" : "%u", f->dropped[i]);
                printf(f->ndropped ? "\n" : "-\n");
                fflush(stdout);
            }
            free(p);
            t = now_ns();
        }
    }
    if (logf) fclose(logf);
    return 0;
}
