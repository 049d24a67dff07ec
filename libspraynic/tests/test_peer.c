/*
 * The C half of LibSprayNicTest: a libspraynic client of a real `spraynic nic` whose peer is a Java NicClient on a
 * second NIC. The JUnit test drives it through stdin and stdout, one line per step:
 *
 *   test_peer IPC_DIR spray-connect PEER_IP | spray-accept | rocev2
 *   > NIC <transport> <ipv4>                   (rocev2: > EP qpn psn ipv4 mtu, < EP qpn psn ipv4 mtu)
 *   > MR <addr> <rkey>        < MR <addr> <rkey>   (each side posted its receives before)
 *   C -> Java: WRITE, WRITE with immediate, SEND, READ; every byte the READ brought checked
 *   > C2J done                < J2C done            (Java checked every byte, then did the same the other way)
 *   every byte Java placed here checked
 *   > J2C verified
 *   a completion ring corrupted as a hostile NIC would: polling must fail with SN_ERR_CORRUPT, not crash
 *   > CORRUPT detected
 *   > CLOSED
 *
 * The layout of both regions (1 MiB each) and the patterns are LibSprayNicTest's, byte for byte.
 */
#define _GNU_SOURCE
#include <spraynic.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KB 1024u
#define REGION (1024u * KB)
#define IMM_C2J 0xC0FFEE01u
#define IMM_J2C 0x7A5A0001u

static const char *ipc_dir;

static void die(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printf("FAIL ");
    vprintf(format, args);
    printf(" (last error: %s)\n", sn_last_error());
    va_end(args);
    fflush(stdout);
    exit(1);
}

static void say(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    printf("\n");
    fflush(stdout);
}

static void expect(const char *prefix, char *line, size_t size)
{
    if (NULL == fgets(line, (int)size, stdin) || 0 != strncmp(line, prefix, strlen(prefix)))
    {
        die("expected a line \"%s...\" on stdin", prefix);
    }
}

/* The test's pattern s: both languages compute the same bytes. */
static uint8_t pattern(uint32_t s, uint32_t i)
{
    return (uint8_t)(i * 131u + s * 17u + (i >> 8) * 7u + 1u);
}

static void fill(sn_mr *mr, uint32_t offset, uint32_t length, uint32_t s)
{
    uint8_t *p = (uint8_t *)mr->local + offset;
    for (uint32_t i = 0; i < length; i++)
    {
        p[i] = pattern(s, i);
    }
}

static void verify(const sn_mr *mr, uint32_t offset, uint32_t length, uint32_t s, const char *what)
{
    const uint8_t *p = (const uint8_t *)mr->local + offset;
    for (uint32_t i = 0; i < length; i++)
    {
        if (p[i] != pattern(s, i))
        {
            die("%s: byte %u of %u is 0x%02x, not 0x%02x", what, i, length, p[i], pattern(s, i));
        }
    }
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Takes n completions from a queue within 30 s. */
static void take(sn_conn *c, int receive, struct sn_wc *wc, int n)
{
    const int64_t deadline = now_ms() + 30000;
    int got = 0;
    while (got < n)
    {
        const int polled = receive ? sn_poll_recv_cq(c, wc + got, n - got) : sn_poll_send_cq(c, wc + got, n - got);
        if (polled < 0)
        {
            die("poll: %s", sn_strerror(polled));
        }
        got += polled;
        if (0 == polled)
        {
            const struct timespec pause = {0, 20000}; /* leave the CPU to the NICs on a small host */
            nanosleep(&pause, NULL);
        }
        if (now_ms() > deadline)
        {
            die("%d of %d %s completions in 30 s", got, n, receive ? "receive" : "send");
        }
    }
    for (int i = 0; i < n; i++)
    {
        if (SN_WC_SUCCESS != wc[i].status)
        {
            die("completion of wr %llu: %s", (unsigned long long)wc[i].wr_id, sn_wc_status_str(wc[i].status));
        }
    }
}

static void post(sn_conn *c, uint64_t id, int opcode, sn_mr *mr, uint32_t offset, uint32_t length, uint64_t remote,
    uint32_t rkey, uint32_t imm)
{
    const struct sn_send_wr wr = {.wr_id = id, .opcode = opcode, .flags = SN_SEND_SIGNALED, .lkey = mr->lkey,
        .local_addr = mr->addr + offset, .length = length, .remote_addr = remote, .rkey = rkey, .imm_data = imm};
    const int error = sn_post_send(c, 0, &wr);
    if (SN_OK != error)
    {
        die("post %llu: %s", (unsigned long long)id, sn_strerror(error));
    }
}

/*
 * Plays a NIC gone bad: a record header in the send completion ring that claims more than the ring holds. Since IPC
 * version 5 the rings are a sealed memfd the NIC handed over (no file of DIR): this process's own mapping of it, found
 * in /proc/self/maps, is written as the NIC would write its side.
 */
static void corrupt_send_completions(sn_nic *nic)
{
    (void)nic;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    uintptr_t start = 0;
    while (NULL != maps && NULL != fgets(line, sizeof line, maps))
    {
        if (NULL != strstr(line, "memfd:spraynic-conn-"))
        {
            start = (uintptr_t)strtoull(line, NULL, 16);
        }
    }
    if (NULL != maps)
    {
        fclose(maps);
    }
    if (0 == start)
    {
        die("no mapping of a connection's memory (memfd:spraynic-conn-*) in this process");
    }
    uint8_t *file = (uint8_t *)start;
    uint8_t *ring = file + 64 + 64 * KB + 768;
    int64_t head;
    memcpy(&head, ring + 128 * KB + 384, 8);
    const int32_t index = (int32_t)(head & (128 * KB - 1));
    const int32_t bad[2] = {0x7FFFFFF8, 3}; /* a committed completion of 2 GiB */
    memcpy(ring + index, bad, sizeof bad);
}

int main(int argc, char **argv)
{
    if (argc < 3)
    {
        fprintf(stderr, "usage: test_peer IPC_DIR spray-connect PEER_IP | spray-connect6 PEER_IP6 | spray-accept | rocev2\n");
        return 2;
    }
    ipc_dir = argv[1];
    const char *mode = argv[2];
    char line[256];
    sn_nic *nic;
    int error = sn_open(ipc_dir, 30000, &nic);
    if (SN_OK != error)
    {
        die("open: %s", sn_strerror(error));
    }
    say("NIC %d 0x%08x", sn_nic_transport(nic), sn_nic_ipv4(nic, 0));
    uint8_t own6[16];
    char own6_text[INET6_ADDRSTRLEN] = "none";
    if (sn_nic_ipv6(nic, 0, own6) && NULL == inet_ntop(AF_INET6, own6, own6_text, sizeof own6_text))
    {
        die("inet_ntop");
    }
    say("NIC6 %s", own6_text);

    sn_mr *mr;
    error = sn_reg_mr(nic, REGION, SN_ACCESS_LOCAL_WRITE | SN_ACCESS_REMOTE_WRITE | SN_ACCESS_REMOTE_READ, &mr);
    if (SN_OK != error)
    {
        die("register: %s", sn_strerror(error));
    }
    if (sn_mr_ptr(mr, mr->addr + REGION) != NULL || sn_mr_ptr(mr, mr->addr) != mr->local)
    {
        die("sn_mr_ptr bounds");
    }
    fill(mr, 0, 64 * KB, 1);
    fill(mr, 64 * KB, 4 * KB, 2);
    fill(mr, 128 * KB, 4 * KB, 3);
    fill(mr, 512 * KB, 64 * KB, 8);

    sn_conn *c = NULL;
    if (0 == strcmp(mode, "spray-connect"))
    {
        struct in_addr peer;
        if (argc < 4 || 1 != inet_pton(AF_INET, argv[3], &peer))
        {
            die("spray-connect needs the peer's IPv4 address");
        }
        const uint32_t ip = ntohl(peer.s_addr);
        error = sn_connect(nic, &ip, 1, 30000, &c);
    }
    else if (0 == strcmp(mode, "spray-connect6"))
    {
        struct sn_peer_address peer = {0};
        if (argc < 4 || 1 != inet_pton(AF_INET6, argv[3], peer.ipv6))
        {
            die("spray-connect6 needs the peer's IPv6 address");
        }
        /* the NIC refuses at once what its IPv6 plane cannot speak: an IPv4 peer, an IPv4-mapped one, both */
        const struct sn_peer_address refused[3] = {{.ipv4 = 0x7f000001},
            {.ipv6 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}}, {.ipv4 = 0x7f000001, .ipv6 = {[15] = 1}}};
        for (int i = 0; i < 3; i++)
        {
            error = sn_connect_addr(nic, &refused[i], 1, 30000, &c);
            if (SN_ERR_BAD_VALUE != error || NULL == strstr(sn_last_error(), "CONNECT plane 0: "))
            {
                die("refused address %d: %s (%s)", i, sn_strerror(error), sn_last_error());
            }
            say("REFUSED %s", sn_last_error());
        }
        error = sn_connect_addr(nic, &peer, 1, 30000, &c);
    }
    else if (0 == strcmp(mode, "spray-accept"))
    {
        say("ACCEPTING");
        error = sn_accept(nic, 30000, &c);
    }
    else
    {
        error = sn_create_qp(nic, 0, &c);
        struct sn_endpoint local;
        struct sn_endpoint remote = {0}; /* an IPv4 peer: ipv6 all 0 */
        if (SN_OK == error && SN_OK == sn_conn_endpoint(c, &local))
        {
            say("EP %u %u %u %u", local.qpn, local.psn, local.ipv4, local.mtu);
            expect("EP ", line, sizeof line);
            if (4 != sscanf(line, "EP %u %u %u %u", &remote.qpn, &remote.psn, &remote.ipv4, &remote.mtu))
            {
                die("a bad EP line");
            }
            error = sn_connect_qp(c, &remote, 30000);
        }
    }
    if (SN_OK != error)
    {
        die("%s: %s", mode, sn_strerror(error));
    }
    const struct sn_recv_wr receives[2] = {
        {.wr_id = 100, .lkey = mr->lkey, .addr = mr->addr + 768 * KB, .length = 4 * KB},
        {.wr_id = 101, .lkey = mr->lkey, .addr = mr->addr + 772 * KB, .length = 4 * KB}};
    for (int i = 0; i < 2; i++)
    {
        if (SN_OK != (error = sn_post_recv(c, 0, &receives[i])))
        {
            die("post receive: %s", sn_strerror(error));
        }
    }
    say("MR %llu %u", (unsigned long long)mr->addr, mr->rkey);
    expect("MR ", line, sizeof line);
    unsigned long long peer_addr;
    unsigned peer_rkey;
    if (2 != sscanf(line, "MR %llu %u", &peer_addr, &peer_rkey))
    {
        die("a bad MR line");
    }

    /* C -> Java */
    post(c, 1, SN_WR_RDMA_WRITE, mr, 0, 64 * KB, peer_addr, peer_rkey, 0);
    post(c, 2, SN_WR_RDMA_WRITE_WITH_IMM, mr, 64 * KB, 4 * KB, peer_addr + 64 * KB, peer_rkey, IMM_C2J);
    post(c, 3, SN_WR_SEND, mr, 128 * KB, 4 * KB, 0, 0, 0);
    post(c, 4, SN_WR_RDMA_READ, mr, 256 * KB, 64 * KB, peer_addr + 512 * KB, peer_rkey, 0);
    struct sn_wc wc[4];
    take(c, 0, wc, 4);
    const int opcodes[5] = {-1, SN_WC_RDMA_WRITE, SN_WC_RDMA_WRITE, SN_WC_SEND, SN_WC_RDMA_READ};
    for (int i = 0; i < 4; i++)
    {
        if (wc[i].wr_id < 1 || wc[i].wr_id > 4 || wc[i].opcode != opcodes[wc[i].wr_id])
        {
            die("send completion %d: wr %llu opcode %d", i, (unsigned long long)wc[i].wr_id, wc[i].opcode);
        }
    }
    verify(mr, 256 * KB, 64 * KB, 4, "what READ brought from the Java peer");
    say("C2J done");

    /* Java -> C */
    expect("J2C done", line, sizeof line);
    verify(mr, 320 * KB, 64 * KB, 5, "what the Java peer's WRITE placed");
    verify(mr, 384 * KB, 4 * KB, 6, "what the Java peer's WRITE with immediate placed");
    take(c, 1, wc, 2);
    int seen_imm = 0;
    int seen_send = 0;
    for (int i = 0; i < 2; i++)
    {
        if (wc[i].wr_id != 100 && wc[i].wr_id != 101)
        {
            die("receive completion of wr %llu", (unsigned long long)wc[i].wr_id);
        }
        if (SN_WC_RECV_RDMA_WITH_IMM == wc[i].opcode)
        {
            if (!wc[i].has_imm || IMM_J2C != wc[i].imm_data)
            {
                die("WRITE with immediate completed with immediate %d/0x%x", wc[i].has_imm, wc[i].imm_data);
            }
            seen_imm++;
        }
        else if (SN_WC_RECV == wc[i].opcode)
        {
            if (4 * KB != wc[i].byte_len)
            {
                die("SEND of 4096 B received as %u B", wc[i].byte_len);
            }
            verify(mr, (uint32_t)(768 * KB + (wc[i].wr_id - 100) * 4 * KB), 4 * KB, 7, "what the Java peer's SEND carried");
            seen_send++;
        }
        else
        {
            die("receive completion opcode %d", wc[i].opcode);
        }
    }
    if (1 != seen_imm || 1 != seen_send)
    {
        die("receive completions: %d immediate, %d send", seen_imm, seen_send);
    }
    say("J2C verified");

    corrupt_send_completions(nic);
    error = sn_poll_send_cq(c, wc, 1);
    if (SN_ERR_CORRUPT != error)
    {
        die("polling a corrupt completion ring gave %d, not SN_ERR_CORRUPT", error);
    }
    say("CORRUPT detected: %s", sn_last_error());

    struct sn_drain drain;
    error = sn_close_conn(c, 1000, &drain);
    if (SN_OK != error)
    {
        die("close connection: %s", sn_strerror(error));
    }
    if (SN_OK != (error = sn_dereg_mr(mr)) || SN_OK != (error = sn_close(nic)))
    {
        die("deregister or close: %s", sn_strerror(error));
    }
    say("CLOSED sends %llu receives %llu", (unsigned long long)drain.posted_sends,
        (unsigned long long)drain.posted_receives);
    return 0;
}
