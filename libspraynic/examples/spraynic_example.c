/*
 * The smallest libspraynic program: through the spray NIC serving IPC_DIR, open a connection to a peer NIC, RDMA
 * WRITE a message into the peer's memory and READ it back (spraynic_write_bw shows RoCEv2 queue pairs too).
 *
 *   spraynic_example IPC_DIR PEER_IP PEER_ADDRESS PEER_RKEY
 *
 * PEER_ADDRESS and PEER_RKEY name memory the peer registered with remote write and read access (a
 * `spraynic nic ... --expose 4m --exchange DIR` peer writes them into DIR).
 */
#include <spraynic.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int error)
{
    fprintf(stderr, "spraynic_example: %s: %s (%s)\n", what, sn_strerror(error), sn_last_error());
    return 1;
}

/* Posts one signaled request and waits for its completion. */
static int run(sn_conn *c, const struct sn_send_wr *wr)
{
    int error = sn_post_send(c, 0, wr);
    if (SN_OK != error)
    {
        return error;
    }
    struct sn_wc wc;
    while (0 == (error = sn_poll_send_cq(c, &wc, 1)))
    {
    }
    if (error < 0)
    {
        return error;
    }
    if (SN_WC_SUCCESS != wc.status)
    {
        fprintf(stderr, "spraynic_example: completion %s\n", sn_wc_status_str(wc.status));
        return SN_ERR_FAILED;
    }
    return SN_OK;
}

int main(int argc, char **argv)
{
    if (argc != 5)
    {
        fprintf(stderr, "usage: spraynic_example IPC_DIR PEER_IP PEER_ADDRESS PEER_RKEY\n");
        return 2;
    }
    struct in_addr peer;
    if (1 != inet_pton(AF_INET, argv[2], &peer))
    {
        fprintf(stderr, "spraynic_example: %s is no IPv4 address\n", argv[2]);
        return 2;
    }
    const uint32_t peer_ip = ntohl(peer.s_addr);
    const uint64_t peer_address = strtoull(argv[3], NULL, 0);
    const uint32_t peer_rkey = (uint32_t)strtoul(argv[4], NULL, 0);

    sn_nic *nic;
    int error = sn_open(argv[1], 5000, &nic);
    if (SN_OK != error)
    {
        return fail("open", error);
    }
    sn_mr *mr;
    sn_conn *c;
    if (SN_OK != (error = sn_reg_mr(nic, 4096, SN_ACCESS_LOCAL_WRITE, &mr)) ||
        SN_OK != (error = sn_connect(nic, &peer_ip, 1, 10000, &c)))
    {
        sn_close(nic);
        return fail("register or connect", error);
    }
    const char message[] = "hello from libspraynic";
    memcpy(mr->local, message, sizeof message);
    struct sn_send_wr wr = {.wr_id = 1, .opcode = SN_WR_RDMA_WRITE, .flags = SN_SEND_SIGNALED, .lkey = mr->lkey,
        .local_addr = mr->addr, .length = sizeof message, .remote_addr = peer_address, .rkey = peer_rkey};
    if (SN_OK != (error = run(c, &wr)))
    {
        sn_close(nic);
        return fail("write", error);
    }
    wr = (struct sn_send_wr){.wr_id = 2, .opcode = SN_WR_RDMA_READ, .flags = SN_SEND_SIGNALED, .lkey = mr->lkey,
        .local_addr = mr->addr + 2048, .length = sizeof message, .remote_addr = peer_address, .rkey = peer_rkey};
    if (SN_OK != (error = run(c, &wr)))
    {
        sn_close(nic);
        return fail("read", error);
    }
    const int same = 0 == memcmp((char *)mr->local + 2048, message, sizeof message);
    printf("wrote and read back \"%s\": %s\n", (char *)mr->local + 2048, same ? "verified" : "MISMATCH");
    struct sn_drain drain;
    sn_close_conn(c, 1000, &drain);
    sn_dereg_mr(mr);
    sn_close(nic);
    return same ? 0 : 1;
}
