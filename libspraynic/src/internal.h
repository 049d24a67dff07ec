/* What the library's files share: field access, the rings, the NIC handle. */
#ifndef SPRAYNIC_INTERNAL_H
#define SPRAYNIC_INTERNAL_H

#include "abi.h"
#include "spraynic.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* ---- fields in shared memory: plain little-endian reads and writes, and the atomic ones */

static inline int32_t sn_get_i32(const uint8_t *p) { int32_t v; memcpy(&v, p, 4); return v; }
static inline int64_t sn_get_i64(const uint8_t *p) { int64_t v; memcpy(&v, p, 8); return v; }
static inline void sn_put_i32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static inline void sn_put_i64(uint8_t *p, int64_t v) { memcpy(p, &v, 8); }

/* Aligned words that another process reads or writes concurrently. */
static inline int32_t sn_load_acquire_i32(const uint8_t *p)
{
    return atomic_load_explicit((_Atomic int32_t *)(uintptr_t)p, memory_order_acquire);
}
static inline int64_t sn_load_acquire_i64(const uint8_t *p)
{
    return atomic_load_explicit((_Atomic int64_t *)(uintptr_t)p, memory_order_acquire);
}
static inline void sn_store_release_i32(uint8_t *p, int32_t v)
{
    atomic_store_explicit((_Atomic int32_t *)(void *)p, v, memory_order_release);
}
static inline void sn_store_release_i64(uint8_t *p, int64_t v)
{
    atomic_store_explicit((_Atomic int64_t *)(void *)p, v, memory_order_release);
}

static inline int32_t sn_align8(int32_t n) { return (n + 7) & ~7; }

/* ---- ring.c: an Agrona ring buffer (one-to-one or many-to-one) */

typedef struct sn_ring
{
    uint8_t *base;       /* the data area; its trailer follows it */
    int32_t capacity;    /* a power of two */
    int32_t max_message; /* longest message body this side writes or accepts */
    int64_t head;        /* consumer: its own head position, never read back from shared memory */
} sn_ring;

/* Called per record, with a private copy of its body; returns true to consume it, false to stop and keep it. */
typedef bool (*sn_record_handler)(void *context, int32_t type, const uint8_t *body, int32_t length);

/* Wraps length bytes of shared memory (capacity + trailer); SN_ERR_CORRUPT when they are not a ring. */
int sn_ring_init(sn_ring *ring, uint8_t *memory, int64_t length, int32_t max_message);
/* Producer (any number, any process): claims room for a record; the body's index, or SN_ERR_QUEUE_FULL. */
int32_t sn_ring_claim(sn_ring *ring, int32_t type, int32_t length);
void sn_ring_commit(sn_ring *ring, int32_t index);
/* Producer: claim, copy and commit. */
int sn_ring_write(sn_ring *ring, int32_t type, const uint8_t *body, int32_t length);
/* Consumer (one): records handed over (each checked and copied), or SN_ERR_CORRUPT. */
int sn_ring_read(sn_ring *ring, sn_record_handler handler, void *context, int limit);

/* ---- broadcast.c: an Agrona broadcast buffer, receiving side */

typedef struct sn_broadcast
{
    uint8_t *base;
    int32_t capacity;
    int64_t next;        /* position of the next record to read */
} sn_broadcast;

int sn_broadcast_init(sn_broadcast *receiver, uint8_t *memory, int64_t length);
/* Hands over at most one record (copied, then checked for being lapped); 1, 0 when none, never fails: a record
 * that cannot be real makes the receiver skip to the newest. */
int sn_broadcast_receive(sn_broadcast *receiver, sn_record_handler handler, void *context);

/* ---- errors.c */

/* Records this thread's reason and returns code. */
int sn_fail(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));
int sn_fail_errno(const char *what);

/* ---- the NIC handle (nic.c, commands.c) */

struct sn_nic
{
    pthread_mutex_t lock;        /* control calls, one at a time */
    int dir_fd;                  /* the IPC directory, opened once: files are named relative to it */
    char socket_path[108];       /* DIR/nic.sock, as connect(2) takes it */
    uint8_t *ctl;                /* the control memory HELLO gave, mapped */
    uint8_t *answers_memory;     /* the answer ring ADD_CLIENT gave, mapped */
    sn_ring to_nic;
    sn_broadcast refusals;
    sn_ring answers;
    uint64_t client_id;
    int64_t token;
    int64_t pid;
    int64_t client_timeout_ms;
    int transport;
    int planes;
    /* this client's correlation ids: its own sequence from a random start, never the command ring's shared counter,
     * which a co-client may rewind so that a stale answer is taken for a new call (IPC.md I10.8) */
    int64_t next_correlation;
    /* the answer a control call waits for */
    int64_t awaited_correlation;
    uint64_t awaited_client;
    int32_t reply_type;
    int32_t reply_length;
    uint8_t reply[SN_MAX_ANSWER_LENGTH];
    /* keepalives */
    pthread_t keepalive;
    pthread_mutex_t keepalive_lock;
    pthread_cond_t keepalive_stop;
    bool keepalive_running;
    bool closing;
    /* what sn_close frees: lists of region.c's and connection.c's nodes */
    struct sn_region_node *regions;
    struct sn_conn *connections;
};

int64_t sn_now_ms(void);
/* 1 while the control memory's heartbeat is fresh. */
bool sn_heartbeat_fresh(const uint8_t *ctl);

/* commands.c: sends the command in body (its first 24 bytes are filled in here) and waits for its answer, left in
 * nic->reply. Returns the answer type (SN_ANS_*), or an error; an ERROR answer becomes SN_ERR_* from its code. */
/* The next correlation id of this client's (control calls are serialized by the handle's lock). */
int64_t sn_next_correlation(sn_nic *nic);
int sn_command(sn_nic *nic, int32_t type, uint8_t *body, int32_t length, int64_t wait_ms);
/* The same for a command that carries memory: sent on DIR/nic.sock with memory_fd (a sealed memfd) as its one
 * SCM_RIGHTS descriptor, answered in the answer ring as the others. */
int sn_command_with_memory(sn_nic *nic, int32_t type, uint8_t *body, int32_t length, int64_t wait_ms, int memory_fd);
/* A memfd of length zero bytes sealed against shrinking, growing and further seals, mapped shared at *memory;
 * returns its descriptor or an error. */
int sn_sealed_memory(uint64_t length, uint8_t **memory);
/* A string field of the reply: its bytes (not terminated) and length, or SN_ERR_CORRUPT. */
int sn_reply_string(const sn_nic *nic, int32_t field, const char **text);
/* connection.c: up to max completions of a completion ring into wc (what sn_poll_send_cq and sn_poll_recv_cq do). */
int sn_poll_ring(sn_ring *ring, struct sn_wc *wc, int max);
/* The longest a connect to DIR/nic.sock, or a send on it, waits (a backlog full: a stalled NIC). */
#define SN_SOCKET_WAIT_MS 5000
/* The longest client timeout a NIC gives (its --ipc-client-timeout allows up to a day); more is not a NIC's answer. */
#define SN_MAX_CLIENT_TIMEOUT_MS 86400000LL
/* A connection to DIR/nic.sock: its descriptor, or SN_ERR_NO_NIC when nobody listens there or it does not accept
 * within SN_SOCKET_WAIT_MS. */
int sn_connect_socket(const sn_nic *nic);
/* Sends HELLO, ADD_CLIENT or OPEN_MEMORY (body's header filled in by the caller) on socket_fd and waits until deadline
 * (epoch ms) for the NIC's answer there, left in nic->reply: SN_ANS_OK with *memory_fd the memory it carried (the
 * caller's to map and close), or an error (an ERROR answer as SN_ERR_* from its code). */
int sn_socket_exchange(sn_nic *nic, int socket_fd, int32_t type, uint8_t *body, int32_t length, int64_t deadline,
    int *memory_fd);
/* Maps length bytes of memory the NIC sent, after checking it is a memfd sealed against shrinking (and further seals),
 * not against writes, of at least length bytes; SN_ERR_CORRUPT otherwise. */
int sn_map_received(int fd, uint64_t length, uint8_t **memory, const char *what);

/* socket_message.c: an I12 message on nic.sock and its SCM_RIGHTS descriptors, both ways. */
#define SN_RECEIVED_MAX_FDS 4
struct sn_received
{
    int fd;          /* the first descriptor that came, -1 if none: the caller's to close (sn_received_close) */
    int fds;         /* how many came; all but the first are closed already */
    bool other;      /* ancillary data of another kind came */
    bool truncated;  /* the message or its ancillary data was cut (MSG_TRUNC, MSG_CTRUNC) */
};
/* Sends length bytes as one message, with fd (when >= 0) as its one descriptor; sendmsg's result. */
ssize_t sn_send_with_fd(int socket_fd, const uint8_t *bytes, size_t length, int fd);
/* Receives one message into bytes (MSG_CMSG_CLOEXEC) and what came with it; recvmsg's result. */
ssize_t sn_receive_with_fds(int socket_fd, uint8_t *bytes, size_t capacity, struct sn_received *received);
/* Closes the descriptor a refused message brought. */
void sn_received_close(struct sn_received *received);

/* region.c, connection.c: unmaps and frees what the client still holds (sn_close). */
void sn_regions_release_all(sn_nic *nic);
void sn_connections_release_all(sn_nic *nic);

#endif
