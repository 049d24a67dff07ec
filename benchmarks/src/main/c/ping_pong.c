/*
 * The C half of the raw ping-pong latency comparison: the same exchange as
 * io.spraynic.bench.e2e.RawPingPong, through the same shim (libspraynic_shim.so), over a crossed pair of
 * net_ring ports (rte_eth_from_rings), one poll thread (lcore) per endpoint.
 *
 *   spraynic-pingpong [--iterations N] [--warmup N] [--length B]
 *
 * A stamps a sequence number into a frame of B bytes and transmits it on port a; B's lcore receives it
 * on port b and transmits it back; A spins until it returns, checks the sequence number and records the
 * round trip. Prints one JSON object (nanoseconds, exact percentiles of the sorted samples).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "spraynic_shim.h"

#define kBurst 32
#define kPoolSize 8191
#define kPoolCache 256
#define kDataRoom (2048 + RTE_PKTMBUF_HEADROOM)
#define kDescriptors 1024
#define kSeqOffset 14

static atomic_int stop_flag;
static uint16_t port_a, port_b;
static struct rte_mempool *pool;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int err)
{
    fprintf(stderr, "error: %s failed: %s\n", what, rte_strerror(err < 0 ? -err : err));
    exit(1);
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* B: every frame that arrives goes straight back. */
static int echo_lcore(void *unused)
{
    (void)unused;
    struct rte_mbuf *burst[kBurst];
    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        unsigned n = spraynic_rx_burst(port_b, 0, burst, kBurst);
        if (n > 0) {
            unsigned sent = spraynic_tx_burst(port_b, 0, burst, (uint16_t)n);
            if (sent < n) {
                spraynic_mbuf_free_bulk(burst + sent, n - sent);
            }
        }
    }
    return 0;
}

static uint16_t ring_port(const char *name, struct rte_ring *rx, struct rte_ring *tx)
{
    int id = rte_eth_from_rings(name, &rx, 1, &tx, 1, SOCKET_ID_ANY);
    if (id < 0) die("rte_eth_from_rings", rte_errno);
    uint16_t port = (uint16_t)id;
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof conf);
    int rc;
    if ((rc = rte_eth_dev_configure(port, 1, 1, &conf)) != 0) die("rte_eth_dev_configure", rc);
    if ((rc = rte_eth_rx_queue_setup(port, 0, kDescriptors, SOCKET_ID_ANY, NULL, pool)) != 0) die("rte_eth_rx_queue_setup", rc);
    if ((rc = rte_eth_tx_queue_setup(port, 0, kDescriptors, SOCKET_ID_ANY, NULL)) != 0) die("rte_eth_tx_queue_setup", rc);
    if ((rc = rte_eth_dev_start(port)) != 0) die("rte_eth_dev_start", rc);
    return port;
}

int main(int argc, char **argv)
{
    long iterations = 100000;
    long warmup = 20000;
    unsigned length = 64;
    static const struct option options[] = {
        {"iterations", required_argument, 0, 'i'}, {"warmup", required_argument, 0, 'w'},
        {"length", required_argument, 0, 'l'}, {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'i': iterations = atol(optarg); break;
        case 'w': warmup = atol(optarg); break;
        case 'l': length = (unsigned)atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [--iterations N] [--warmup N] [--length B]\n", argv[0]);
            return 2;
        }
    }
    if (iterations < 1 || warmup < 0 || length < 60 || length > 2048) {
        fprintf(stderr, "error: bad arguments (iterations >= 1, warmup >= 0, length 60-2048)\n");
        return 2;
    }

    /* Both lcores float over every CPU, as the Java poll threads do. */
    char lcores[64], prefix[64];
    long last_cpu = sysconf(_SC_NPROCESSORS_ONLN) - 1;
    snprintf(lcores, sizeof lcores, "--lcores=0@(0-%ld),1@(0-%ld)", last_cpu, last_cpu);
    snprintf(prefix, sizeof prefix, "--file-prefix=spraynic-pp-c-%d", (int)getpid());
    char *eal_argv[] = {"spraynic-pingpong", "--no-huge", "-m", "512", "--no-pci", lcores, prefix,
                        "--log-level=lib.eal:error", NULL};
    if (rte_eal_init(8, eal_argv) < 0) {
        die("rte_eal_init", rte_errno);
    }
    pool = spraynic_pktmbuf_pool_create("pp_c", kPoolSize, kPoolCache, 0, kDataRoom, SOCKET_ID_ANY); /* as Java's Mempool */
    if (pool == NULL) die("spraynic_pktmbuf_pool_create", rte_errno);
    struct rte_ring *ab = rte_ring_create("ppab", kDescriptors, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    struct rte_ring *ba = rte_ring_create("ppba", kDescriptors, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (ab == NULL || ba == NULL) die("rte_ring_create", rte_errno);
    port_a = ring_port("ppa", ba, ab);
    port_b = ring_port("ppb", ab, ba);

    unsigned echo = rte_get_next_lcore(-1, 1, 0);
    if (echo >= RTE_MAX_LCORE) {
        fprintf(stderr, "error: no second lcore\n");
        return 1;
    }
    int rc = rte_eal_remote_launch(echo_lcore, NULL, echo);
    if (rc != 0) die("rte_eal_remote_launch", rc);

    uint64_t *samples = malloc(sizeof(uint64_t) * (size_t)iterations);
    if (samples == NULL) die("malloc", ENOMEM);
    struct rte_mbuf *burst[kBurst];
    long mismatches = 0;
    for (long i = -warmup; i < iterations; i++) {
        if (spraynic_mbuf_alloc_bulk(pool, burst, 1) != 0) die("spraynic_mbuf_alloc_bulk", ENOMEM);
        burst[0]->data_len = (uint16_t)length;
        burst[0]->pkt_len = length;
        uint64_t seq = (uint64_t)(i + warmup);
        memcpy(rte_pktmbuf_mtod(burst[0], char *) + kSeqOffset, &seq, sizeof seq);
        uint64_t start = now_ns();
        while (spraynic_tx_burst(port_a, 0, burst, 1) != 1) {
        }
        unsigned n;
        while ((n = spraynic_rx_burst(port_a, 0, burst, kBurst)) == 0) {
        }
        uint64_t rtt = now_ns() - start;
        uint64_t back;
        memcpy(&back, rte_pktmbuf_mtod(burst[0], char *) + kSeqOffset, sizeof back);
        if (n != 1 || back != seq || burst[0]->data_len != length) mismatches++;
        spraynic_mbuf_free_bulk(burst, n);
        if (i >= 0) samples[i] = rtt;
    }
    atomic_store(&stop_flag, 1);
    rte_eal_wait_lcore(echo);

    qsort(samples, (size_t)iterations, sizeof samples[0], compare_u64);
    double sum = 0;
    for (long i = 0; i < iterations; i++) sum += (double)samples[i];
#define PCT(p) samples[(long)((p) / 100.0 * (double)(iterations - 1))]
    printf("{\"language\":\"c\",\"frameLength\":%u,\"iterations\":%ld,\"mismatches\":%ld,\"meanNs\":%.1f,"
           "\"p50Ns\":%" PRIu64 ",\"p99Ns\":%" PRIu64 ",\"p999Ns\":%" PRIu64 ",\"maxNs\":%" PRIu64 "}\n",
           length, iterations, mismatches, sum / (double)iterations, PCT(50), PCT(99), PCT(99.9), samples[iterations - 1]);
    free(samples);
    rte_eth_dev_stop(port_a);
    rte_eth_dev_stop(port_b);
    rte_eth_dev_close(port_a);
    rte_eth_dev_close(port_b);
    rte_eal_cleanup();
    return mismatches == 0 ? 0 : 1;
}
