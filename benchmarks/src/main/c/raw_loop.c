/*
 * The C half of the raw datapath comparison: the same loop as io.spraynic.bench.raw.RawLoop,
 * through the same shim (libspraynic_shim.so), with the same EAL, pool, port and burst settings.
 *
 *   spraynic-rawloop --pmd net_null|net_ring --mode rx|tx|io|txrx [--touch length|none] [--seconds S] [--burst N]
 *                    [--length B]
 *
 * Prints one JSON object like the Java side's, with "language":"c": Mpps by wall-clock time and by
 * the CPU time the loop's thread used (what is left when the machine is shared).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "raw_loop_core.h"
#include "spraynic_shim.h"

#define kPoolSize 8191
#define kPoolCache 256
#define kDataRoom (2048 + RTE_PKTMBUF_HEADROOM)
#define kDescriptors 1024
#define kRingPrimedFrames 512

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static void die(const char *what, int err)
{
    fprintf(stderr, "error: %s failed: %s\n", what, rte_strerror(err < 0 ? -err : err));
    exit(1);
}

/* As RawLoop.loop: 1024 bursts between clock reads. */
static uint64_t loop_for(struct spraynic_rawloop *loop, uint64_t nanos)
{
    uint64_t deadline = now_ns() + nanos;
    uint64_t counted = 0;
    do {
        counted += spraynic_rawloop_bursts(loop, 1024);
    } while (now_ns() < deadline);
    return counted;
}

int main(int argc, char **argv)
{
    const char *pmd = "net_null";
    const char *mode_text = "tx";
    const char *touch_text = "length";
    double seconds = 5;
    unsigned n = 32;
    unsigned length = 64;

    static const struct option options[] = {
        {"pmd", required_argument, 0, 'p'}, {"mode", required_argument, 0, 'm'},
        {"seconds", required_argument, 0, 's'}, {"burst", required_argument, 0, 'b'},
        {"length", required_argument, 0, 'l'}, {"touch", required_argument, 0, 't'}, {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'p': pmd = optarg; break;
        case 'm': mode_text = optarg; break;
        case 's': seconds = atof(optarg); break;
        case 'b': n = (unsigned)atoi(optarg); break;
        case 'l': length = (unsigned)atoi(optarg); break;
        case 't': touch_text = optarg; break;
        default:
            fprintf(stderr, "usage: %s --pmd net_null|net_ring --mode rx|tx|io|txrx [--touch length|none] [--seconds S] "
                            "[--burst N] [--length B]\n", argv[0]);
            return 2;
        }
    }
    int mode = strcmp(mode_text, "rx") == 0 ? RAWLOOP_RX : strcmp(mode_text, "io") == 0 ? RAWLOOP_IO :
               strcmp(mode_text, "txrx") == 0 ? RAWLOOP_TXRX : RAWLOOP_TX;
    int touch = strcmp(touch_text, "length") == 0;
    int ring = strcmp(pmd, "net_ring") == 0;
    if ((!ring && strcmp(pmd, "net_null") != 0) || (mode == RAWLOOP_TX && strcmp(mode_text, "tx") != 0) ||
        (!touch && strcmp(touch_text, "none") != 0) || n < 1 || n > SPRAYNIC_RAWLOOP_MAX_BURST || length < 60 ||
        length > 2048 || seconds <= 0) {
        fprintf(stderr, "error: bad arguments (pmd net_null|net_ring, mode rx|tx|io|txrx, touch length|none, burst 1-%d, "
                "length 60-2048)\n", SPRAYNIC_RAWLOOP_MAX_BURST);
        return 2;
    }

    /* Let the main lcore float over every CPU, as the Java poll thread does: pinning only the C side
     * to CPU 0 would make the comparison depend on what else runs there. */
    char lcores[64], prefix[64], vdev[128];
    snprintf(lcores, sizeof lcores, "--lcores=0@(0-%ld)", sysconf(_SC_NPROCESSORS_ONLN) - 1);
    snprintf(prefix, sizeof prefix, "--file-prefix=spraynic-raw-c-%d", (int)getpid());
    if (ring) {
        snprintf(vdev, sizeof vdev, "--vdev=net_ring0");
    } else {
        snprintf(vdev, sizeof vdev, "--vdev=net_null0,size=%u,copy=0", length);
    }
    char *eal_argv[] = {"spraynic-rawloop", "--no-huge", "-m", "512", "--no-pci", lcores, prefix, vdev,
                        "--log-level=lib.eal:error", NULL};
    if (rte_eal_init(9, eal_argv) < 0) {
        die("rte_eal_init", rte_errno);
    }
    struct rte_mempool *pool = spraynic_pktmbuf_pool_create("raw_c", kPoolSize, kPoolCache, 0, kDataRoom, SOCKET_ID_ANY); /* as Java's Mempool */
    if (pool == NULL) {
        die("spraynic_pktmbuf_pool_create", rte_errno);
    }
    uint16_t port;
    int rc = rte_eth_dev_get_port_by_name(ring ? "net_ring0" : "net_null0", &port);
    if (rc != 0) die("rte_eth_dev_get_port_by_name", rc);
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof conf);
    if ((rc = rte_eth_dev_configure(port, 1, 1, &conf)) != 0) die("rte_eth_dev_configure", rc);
    if ((rc = rte_eth_rx_queue_setup(port, 0, kDescriptors, SOCKET_ID_ANY, NULL, pool)) != 0) die("rte_eth_rx_queue_setup", rc);
    if ((rc = rte_eth_tx_queue_setup(port, 0, kDescriptors, SOCKET_ID_ANY, NULL)) != 0) die("rte_eth_tx_queue_setup", rc);
    if ((rc = rte_eth_dev_start(port)) != 0) die("rte_eth_dev_start", rc);

    struct spraynic_rawloop *loop = spraynic_rawloop_create(pool, port, ring, mode, touch, n, (uint16_t)length);
    if (loop == NULL) {
        die("spraynic_rawloop_create", rte_errno);
    }
    if (ring && (mode == RAWLOOP_IO || mode == RAWLOOP_TXRX)) {
        spraynic_rawloop_prime(loop, kRingPrimedFrames);
    }
    loop_for(loop, (uint64_t)(seconds * 0.25e9));
    uint64_t cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t start = now_ns();
    uint64_t counted = loop_for(loop, (uint64_t)(seconds * 1e9));
    double elapsed = (now_ns() - start) / 1e9;
    double cpu = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start) / 1e9;

    printf("{\"pmd\":\"%s\",\"mode\":\"%s\",\"touch\":\"%s\",\"language\":\"c\",\"burst\":%u,\"frameLength\":%u,"
           "\"packets\":%" PRIu64 ",\"seconds\":%.6f,\"mpps\":%.4f,\"cpuSeconds\":%.6f,\"cpuMpps\":%.4f}\n",
           pmd, mode_text, touch_text, n, length, counted, elapsed, counted / elapsed / 1e6, cpu, counted / cpu / 1e6);

    spraynic_rawloop_free(loop);
    rte_eth_dev_stop(port);
    rte_eth_dev_close(port);
    rte_eal_cleanup();
    return 0;
}
