/*
 * libspraynic: a C client of a SprayNIC process (spraynic nic --ipc-dir DIR), in the style of ibverbs.
 * It speaks the shared-memory ABI of docs/IPC.md; no Java runs on this side.
 *
 *   sn_nic *nic;  sn_open("/dev/shm/spraynic-me", 5000, &nic);
 *   sn_mr *mr;    sn_reg_mr(nic, 1 << 20, SN_ACCESS_LOCAL_WRITE | SN_ACCESS_REMOTE_WRITE, &mr);
 *   sn_conn *c;   sn_connect(nic, peer_ipv4, 1, 5000, &c);
 *   struct sn_send_wr wr = { .wr_id = 1, .opcode = SN_WR_RDMA_WRITE, .lkey = mr->lkey, .local_addr = mr->addr,
 *                            .length = 4096, .remote_addr = peer_addr, .rkey = peer_rkey, .flags = SN_SEND_SIGNALED };
 *   sn_post_send(c, 0, &wr);
 *   struct sn_wc wc;  while (sn_poll_send_cq(c, &wc, 1) == 0) { }
 *   sn_close_conn(c, 1000, NULL);  sn_dereg_mr(mr);  sn_close(nic);
 *
 * Every call returns 0 (or a count) on success and a negative SN_ERR_* on failure; sn_strerror names the code and
 * sn_last_error() gives this thread's last reason in words (the NIC's own, when it refused). Control calls
 * (open, register, connect, accept, queue pairs, close) wait for the NIC and may come from any thread. Posting and
 * polling never wait, allocate or lock: one thread at a time may post on a connection, one may poll each of its
 * completion queues. Every byte the NIC writes into shared memory is checked before use: a NIC that writes what
 * no honest NIC writes makes calls fail with SN_ERR_CORRUPT, never makes this process read or write out of bounds.
 */
#ifndef SPRAYNIC_H
#define SPRAYNIC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The IPC ABI version this library speaks (docs/IPC.md): a NIC of any other version is refused. */
#define SN_IPC_VERSION 7

enum sn_error
{
    SN_OK = 0,
    SN_ERR_INVALID = -1,        /* a bad argument */
    SN_ERR_NO_NIC = -2,         /* no NIC serves the directory (yet) */
    SN_ERR_VERSION = -3,        /* the NIC speaks another IPC version */
    SN_ERR_NIC_STOPPED = -4,    /* the NIC closed, or its heartbeat stopped */
    SN_ERR_TIMEOUT = -5,        /* no answer in time (or, for sn_accept, no peer) */
    SN_ERR_CORRUPT = -6,        /* the NIC's shared memory holds what no honest NIC writes */
    SN_ERR_RING_RESET = -7,     /* the NIC reset its corrupt command ring: the command may be lost, retry */
    SN_ERR_QUEUE_FULL = -8,     /* the request ring is full: poll completions, post again */
    SN_ERR_INVALID_STATE = -9,  /* the connection is closing or the NIC closed */
    SN_ERR_SYSTEM = -10,        /* a system call failed (sn_last_error says which, with errno) */
    SN_ERR_NO_MEMORY = -11,
    /* The NIC refused the command, with the code of its ERROR answer (docs/IPC.md, Error codes): -20 - code. */
    SN_ERR_BAD_VALUE = -21,
    SN_ERR_LIMIT = -22,
    SN_ERR_UNKNOWN_OBJECT = -23,
    SN_ERR_NOT_CONNECTED = -24,
    SN_ERR_FAILED = -25,
    SN_ERR_MALFORMED = -26,
    SN_ERR_NOT_PERMITTED = -27,
    SN_ERR_REFUSED_OTHER = -28  /* a refusal code this library does not know */
};

/* Transports (the NIC's mode; a connection's kind). */
enum sn_transport
{
    SN_TRANSPORT_SPRAY = 0,
    SN_TRANSPORT_ROCEV2 = 1
};

/* Region access flags. */
enum sn_access
{
    SN_ACCESS_LOCAL_WRITE = 1,
    SN_ACCESS_REMOTE_WRITE = 2,
    SN_ACCESS_REMOTE_READ = 4,
    SN_ACCESS_REMOTE_ATOMIC = 8
};

/* Send work request opcodes. */
enum sn_wr_opcode
{
    SN_WR_RDMA_WRITE = 0,
    SN_WR_RDMA_WRITE_WITH_IMM = 1,
    SN_WR_SEND = 2,
    SN_WR_SEND_WITH_IMM = 3,
    SN_WR_RDMA_READ = 4
};

/* Send flags. */
enum sn_send_flags
{
    SN_SEND_SIGNALED = 1,   /* complete with a work completion also on success */
    SN_SEND_SOLICITED = 2   /* set the solicited-event bit */
};

/* Work completion statuses: the numbers of ibverbs' enum ibv_wc_status. */
enum sn_wc_status
{
    SN_WC_SUCCESS = 0, SN_WC_LOC_LEN_ERR, SN_WC_LOC_QP_OP_ERR, SN_WC_LOC_EEC_OP_ERR, SN_WC_LOC_PROT_ERR,
    SN_WC_WR_FLUSH_ERR, SN_WC_MW_BIND_ERR, SN_WC_BAD_RESP_ERR, SN_WC_LOC_ACCESS_ERR, SN_WC_REM_INV_REQ_ERR,
    SN_WC_REM_ACCESS_ERR, SN_WC_REM_OP_ERR, SN_WC_RETRY_EXC_ERR, SN_WC_RNR_RETRY_EXC_ERR, SN_WC_LOC_RDD_VIOL_ERR,
    SN_WC_REM_INV_RD_REQ_ERR, SN_WC_REM_ABORT_ERR, SN_WC_INV_EECN_ERR, SN_WC_INV_EEC_STATE_ERR, SN_WC_FATAL_ERR,
    SN_WC_RESP_TIMEOUT_ERR, SN_WC_GENERAL_ERR
};

/* Work completion opcodes (the IPC ABI's numbering, not ibverbs': receives are 5 and 6). */
enum sn_wc_opcode
{
    SN_WC_SEND = 0,
    SN_WC_RDMA_WRITE = 1,
    SN_WC_RDMA_READ = 2,
    SN_WC_COMP_SWAP = 3,
    SN_WC_FETCH_ADD = 4,
    SN_WC_RECV = 5,
    SN_WC_RECV_RDMA_WITH_IMM = 6
};

typedef struct sn_nic sn_nic;
typedef struct sn_conn sn_conn;

/* A registered region: memory this process and the NIC both map. Read-only for the application. */
typedef struct sn_mr
{
    void *local;        /* this process's view of the first byte */
    uint64_t addr;      /* the first byte's virtual address as the NIC and peers name it (work requests, RETHs) */
    uint64_t length;
    uint32_t lkey;      /* for this client's work requests */
    uint32_t rkey;      /* for peers' RDMA WRITEs and READs */
    uint32_t access;    /* enum sn_access */
    uint64_t id;        /* the NIC's id for it */
    sn_nic *nic;
} sn_mr;

struct sn_send_wr
{
    uint64_t wr_id;         /* returned in the completion */
    int opcode;             /* enum sn_wr_opcode */
    int flags;              /* enum sn_send_flags */
    uint32_t lkey;          /* a region of this client (0 with length 0) */
    uint64_t local_addr;    /* NIC virtual address: mr->addr + offset */
    uint32_t length;        /* at most INT32_MAX */
    uint64_t remote_addr;
    uint32_t rkey;
    uint32_t imm_data;      /* for the *_WITH_IMM opcodes */
};

struct sn_recv_wr
{
    uint64_t wr_id;
    uint32_t lkey;          /* a region with SN_ACCESS_LOCAL_WRITE */
    uint64_t addr;          /* NIC virtual address */
    uint32_t length;
};

struct sn_wc
{
    uint64_t wr_id;
    uint32_t byte_len;
    uint32_t imm_data;
    uint32_t qp_num;
    int status;             /* enum sn_wc_status */
    int opcode;             /* enum sn_wc_opcode */
    int has_imm;
};

/* A RoCEv2 queue pair's attributes, handed to the peer out of band (as with ibverbs). */
struct sn_endpoint
{
    uint32_t qpn;
    uint32_t psn;
    uint32_t ipv4;          /* host order: 10.0.0.1 is 0x0A000001; 0 for an IPv6 queue pair */
    uint32_t mtu;           /* bytes */
    uint8_t ipv6[16];       /* its IPv6 address (GID), network order as written; all 0 for an IPv4 queue pair */
};

/* What the NIC found when it closed a connection. */
struct sn_drain
{
    uint64_t posted_sends;
    uint64_t posted_receives;
    uint32_t waiting;
    int idle;
};

/* Connects to the NIC serving ipc_dir (NULL: $SPRAYNIC_IPC_DIR, else /dev/shm/spraynic-$USER), waiting up to
 * timeout_ms for one to start. */
int sn_open(const char *ipc_dir, int timeout_ms, sn_nic **nic);
/* Leaves the NIC (it closes this client's connections and frees its regions) and frees everything. */
int sn_close(sn_nic *nic);

int sn_nic_transport(const sn_nic *nic);           /* enum sn_transport */
int sn_nic_planes(const sn_nic *nic);
uint32_t sn_nic_ipv4(const sn_nic *nic, int plane); /* the NIC's address on a plane, host order; 0 if none */
/* The NIC's IPv6 address on a plane into ipv6 (network order; ABI version 6): 1 when it has one, else 0 (ipv6 all 0). */
int sn_nic_ipv6(const sn_nic *nic, int plane, uint8_t ipv6[16]);
int64_t sn_nic_pid(const sn_nic *nic);
uint64_t sn_nic_client_id(const sn_nic *nic);
/* 1 while the NIC's heartbeat is fresh. */
int sn_nic_alive(const sn_nic *nic);

/* Registers length new bytes (zeroed) with the NIC; *mr lives until sn_dereg_mr or sn_close. */
int sn_reg_mr(sn_nic *nic, uint64_t length, uint32_t access, sn_mr **mr);
int sn_dereg_mr(sn_mr *mr);
/* This process's pointer to a NIC virtual address inside mr (NULL when outside). */
void *sn_mr_ptr(const sn_mr *mr, uint64_t addr);

/* Opens a spray connection to a peer NIC (its address on each of the NIC's planes, host order). */
int sn_connect(sn_nic *nic, const uint32_t *peer_ipv4, int planes, int timeout_ms, sn_conn **conn);

/* A peer's address on one plane: exactly one of the two, the other all 0. */
struct sn_peer_address
{
    uint32_t ipv4;          /* host order: 10.0.0.1 is 0x0A000001; 0 for an IPv6 peer */
    uint8_t ipv6[16];       /* network order as written: fd00:1::20 is fd 00 00 01 .. 20; all 0 for an IPv4 peer */
};
/* sn_connect with the peer's address of either family on each plane (ABI version 6): IPv6 on a plane where the NIC
 * has an IPv6 address, IPv4 on the others; the NIC refuses another mix, a multicast or an IPv4-mapped IPv6 address
 * (SN_ERR_INVALID, with the plane and why in sn_last_error). */
int sn_connect_addr(sn_nic *nic, const struct sn_peer_address *peer, int planes, int timeout_ms, sn_conn **conn);
/* Takes the next spray connection a peer opened: SN_ERR_TIMEOUT when none came within timeout_ms. */
int sn_accept(sn_nic *nic, int timeout_ms, sn_conn **conn);
/* Creates a RoCEv2 RC queue pair on a plane; hand sn_conn_endpoint to the peer, then sn_connect_qp. */
int sn_create_qp(sn_nic *nic, int plane, sn_conn **conn);
int sn_connect_qp(sn_conn *conn, const struct sn_endpoint *remote, int timeout_ms);
/* Stops posting, lets the NIC finish what was posted (up to timeout_ms), closes and frees conn. */
int sn_close_conn(sn_conn *conn, int timeout_ms, struct sn_drain *drain);

int sn_conn_transport(const sn_conn *conn);         /* enum sn_transport */
uint32_t sn_conn_local_id(const sn_conn *conn);     /* connection id (spray) or QP number (RoCEv2) */
int sn_conn_streams(const sn_conn *conn);
int sn_conn_endpoint(const sn_conn *conn, struct sn_endpoint *endpoint); /* RoCEv2 only */

/* Posting: 0, SN_ERR_QUEUE_FULL, SN_ERR_INVALID (a field) or SN_ERR_INVALID_STATE. A request the NIC cannot
 * carry out (an lkey not of this client, memory outside the region) completes with an error status. */
int sn_post_send(sn_conn *conn, int stream, const struct sn_send_wr *wr);
int sn_post_recv(sn_conn *conn, int stream, const struct sn_recv_wr *wr);
/* Polling: completions taken (0..max), SN_ERR_INVALID (no array) or SN_ERR_CORRUPT (the NIC broke the ring). */
int sn_poll_send_cq(sn_conn *conn, struct sn_wc *wc, int max);
int sn_poll_recv_cq(sn_conn *conn, struct sn_wc *wc, int max);

const char *sn_strerror(int error);
const char *sn_wc_status_str(int status);
/* This thread's reason for its last failed call, in words. */
const char *sn_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
