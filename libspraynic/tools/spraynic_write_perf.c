/*
 * spraynic_write_bw / spraynic_write_lat: RDMA WRITE bandwidth and latency through libspraynic, in the style of
 * perftest's ib_write_bw and ib_write_lat. The program is a client of two NICs at once (one IPC directory each,
 * joined by whatever ports they run on): it connects them (a spray connection, or a pair of RoCEv2 queue pairs
 * when the NICs run rocev2), then WRITEs from the first NIC's region into the second's.
 *
 *   spraynic_write_bw  --ipc-dir A --peer-ipc-dir B [--size 64] [--iters 100000] [--depth 64] [--idle busy|sleep]
 *   spraynic_write_lat --ipc-dir A --peer-ipc-dir B [--size 64] [--iters 10000] [--idle busy|sleep]
 *
 * bw: `depth` WRITEs in flight, each signaled; reports messages/s and Gbit/s. lat: one signaled WRITE at a time;
 * reports post-to-completion latency percentiles in microseconds. The name it runs under picks the mode
 * (or --bw / --lat). --idle busy (the default, as perftest) polls without pause; --idle sleep sleeps 20 us after an
 * empty poll, which leaves the CPU to the NICs where they share too few cores with this program.
 */
#define _GNU_SOURCE
#include <spraynic.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct options
{
    const char *ipc_dir;
    const char *peer_ipc_dir;
    uint32_t size;
    long iterations;
    int depth;
    int latency;
    int sleep;
};

static void die(const char *what, int error)
{
    fprintf(stderr, "spraynic_write: %s: %s (%s)\n", what, sn_strerror(error), sn_last_error());
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct accepting
{
    sn_nic *nic;
    sn_conn *conn;
    int error;
};

static void *accept_one(void *argument)
{
    struct accepting *a = argument;
    a->error = sn_accept(a->nic, 30000, &a->conn);
    return NULL;
}

/* Joins the two NICs: spray connect + accept, or two queue pairs handed each other's endpoint. */
static void join(sn_nic *local, sn_nic *peer, sn_conn **out, sn_conn **peer_out)
{
    int error;
    if (SN_TRANSPORT_SPRAY == sn_nic_transport(local))
    {
        struct accepting a = {.nic = peer};
        pthread_t thread;
        pthread_create(&thread, NULL, accept_one, &a);
        uint32_t ips[8];
        const int planes = sn_nic_planes(peer) < 8 ? sn_nic_planes(peer) : 8;
        for (int p = 0; p < planes; p++)
        {
            ips[p] = sn_nic_ipv4(peer, p);
        }
        error = sn_connect(local, ips, planes, 30000, out);
        pthread_join(thread, NULL);
        if (SN_OK != error || SN_OK != a.error)
        {
            die("connect", SN_OK != error ? error : a.error);
        }
        *peer_out = a.conn;
        return;
    }
    struct sn_endpoint mine;
    struct sn_endpoint theirs;
    if (SN_OK != (error = sn_create_qp(local, 0, out)) || SN_OK != (error = sn_create_qp(peer, 0, peer_out)) ||
        SN_OK != (error = sn_conn_endpoint(*out, &mine)) || SN_OK != (error = sn_conn_endpoint(*peer_out, &theirs)) ||
        SN_OK != (error = sn_connect_qp(*peer_out, &mine, 30000)) || SN_OK != (error = sn_connect_qp(*out, &theirs, 30000)))
    {
        die("queue pairs", error);
    }
}

static int compare(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a;
    const uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Polls once; fails on an error status; an empty poll sleeps 20 us with --idle sleep. */
static int reap(const struct options *o, sn_conn *c, struct sn_wc *wc, int max)
{
    const int n = sn_poll_send_cq(c, wc, max);
    if (n < 0)
    {
        die("poll", n);
    }
    if (0 == n && o->sleep)
    {
        const struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
    for (int i = 0; i < n; i++)
    {
        if (SN_WC_SUCCESS != wc[i].status)
        {
            fprintf(stderr, "spraynic_write: WRITE completed with %s\n", sn_wc_status_str(wc[i].status));
            exit(1);
        }
    }
    return n;
}

static void run(const struct options *o, sn_conn *c, const sn_mr *mr, const sn_mr *peer_mr)
{
    struct sn_send_wr wr = {.opcode = SN_WR_RDMA_WRITE, .flags = SN_SEND_SIGNALED, .lkey = mr->lkey,
        .local_addr = mr->addr, .length = o->size, .remote_addr = peer_mr->addr, .rkey = peer_mr->rkey};
    struct sn_wc wc[64];
    if (o->latency)
    {
        uint64_t *samples = malloc(sizeof(uint64_t) * (size_t)o->iterations);
        for (long i = 0; i < o->iterations; i++)
        {
            wr.wr_id = (uint64_t)i;
            const uint64_t start = now_ns();
            const int error = sn_post_send(c, 0, &wr);
            if (SN_OK != error)
            {
                die("post", error);
            }
            while (0 == reap(o, c, wc, 1))
            {
            }
            samples[i] = now_ns() - start;
        }
        qsort(samples, (size_t)o->iterations, sizeof samples[0], compare);
        const long n = o->iterations;
        printf("#bytes  #iterations  t_min[us]  t_p50[us]  t_p99[us]  t_p999[us]  t_max[us]\n");
        printf("%-7u %-12ld %-10.2f %-10.2f %-10.2f %-11.2f %-10.2f\n", o->size, n, samples[0] / 1e3,
            samples[n / 2] / 1e3, samples[n * 99 / 100] / 1e3, samples[n * 999 / 1000] / 1e3, samples[n - 1] / 1e3);
        free(samples);
        return;
    }
    long posted = 0;
    long completed = 0;
    const uint64_t start = now_ns();
    while (completed < o->iterations)
    {
        while (posted < o->iterations && posted - completed < o->depth)
        {
            wr.wr_id = (uint64_t)posted;
            const int error = sn_post_send(c, 0, &wr);
            if (SN_ERR_QUEUE_FULL == error)
            {
                break;
            }
            if (SN_OK != error)
            {
                die("post", error);
            }
            posted++;
        }
        completed += reap(o, c, wc, 64);
    }
    const double seconds = (double)(now_ns() - start) / 1e9;
    printf("#bytes  #iterations  BW[Gb/s]   MsgRate[Mpps]\n");
    printf("%-7u %-12ld %-10.3f %-10.4f\n", o->size, o->iterations, (double)o->size * 8.0 * (double)o->iterations /
        seconds / 1e9, (double)o->iterations / seconds / 1e6);
}

static void usage(void)
{
    fprintf(stderr, "usage: spraynic_write_bw|spraynic_write_lat --ipc-dir DIR --peer-ipc-dir DIR [--size BYTES] "
        "[--iters N] [--depth N] [--idle busy|sleep] [--bw|--lat]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct options o = {.size = 64, .iterations = -1, .depth = 64, .latency = NULL != strstr(argv[0], "_lat")};
    for (int i = 1; i < argc; i++)
    {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (0 == strcmp(argv[i], "--bw") || 0 == strcmp(argv[i], "--lat"))
        {
            o.latency = 0 == strcmp(argv[i], "--lat");
            continue;
        }
        if (NULL == value)
        {
            usage();
        }
        if (0 == strcmp(argv[i], "--ipc-dir")) o.ipc_dir = value;
        else if (0 == strcmp(argv[i], "--peer-ipc-dir")) o.peer_ipc_dir = value;
        else if (0 == strcmp(argv[i], "--size")) o.size = (uint32_t)strtoul(value, NULL, 0);
        else if (0 == strcmp(argv[i], "--iters")) o.iterations = strtol(value, NULL, 0);
        else if (0 == strcmp(argv[i], "--depth")) o.depth = (int)strtol(value, NULL, 0);
        else if (0 == strcmp(argv[i], "--idle") && (0 == strcmp(value, "busy") || 0 == strcmp(value, "sleep")))
            o.sleep = 0 == strcmp(value, "sleep");
        else usage();
        i++;
    }
    if (o.iterations < 0)
    {
        o.iterations = o.latency ? 10000 : 100000;
    }
    if (NULL == o.ipc_dir || NULL == o.peer_ipc_dir || 0 == o.size || o.size > (1u << 30) || o.iterations < 1 ||
        o.depth < 1 || o.depth > 1024)
    {
        usage();
    }
    sn_nic *local;
    sn_nic *peer;
    int error;
    if (SN_OK != (error = sn_open(o.ipc_dir, 5000, &local)) || SN_OK != (error = sn_open(o.peer_ipc_dir, 5000, &peer)))
    {
        die("open", error);
    }
    sn_mr *mr;
    sn_mr *peer_mr;
    if (SN_OK != (error = sn_reg_mr(local, o.size, SN_ACCESS_LOCAL_WRITE, &mr)) ||
        SN_OK != (error = sn_reg_mr(peer, o.size, SN_ACCESS_LOCAL_WRITE | SN_ACCESS_REMOTE_WRITE, &peer_mr)))
    {
        die("register", error);
    }
    sn_conn *c;
    sn_conn *peer_c;
    join(local, peer, &c, &peer_c);
    printf("# spraynic_write_%s: %s, %u B WRITEs, NIC pids %lld -> %lld\n", o.latency ? "lat" : "bw",
        SN_TRANSPORT_SPRAY == sn_conn_transport(c) ? "spray" : "RoCEv2", o.size, (long long)sn_nic_pid(local),
        (long long)sn_nic_pid(peer));
    run(&o, c, mr, peer_mr);
    sn_close_conn(c, 1000, NULL);
    sn_close_conn(peer_c, 1000, NULL);
    sn_close(local);
    sn_close(peer);
    return 0;
}
