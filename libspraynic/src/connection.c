/*
 * Connections (docs/IPC.md, Connections): CONNECT, ACCEPT or CREATE_QUEUE_PAIR make one at the NIC, which answers
 * CONNECTION_READY; OPEN_MEMORY on DIR/nic.sock then hands over the connection's three rings as a sealed memfd
 * (docs/IPC.md I12): this client posts work requests into the first,
 * the NIC puts send and receive completions into the other two. Posting and polling touch only those rings.
 */
#include "internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define COMPLETION_MAX_BODY 64

struct sn_conn
{
    sn_nic *nic;
    struct sn_conn *next;
    uint8_t *file;
    uint64_t id;
    int transport;
    uint32_t local_id;
    int streams;
    int plane;
    struct sn_endpoint endpoint;
    sn_ring requests;
    sn_ring send_completions;
    sn_ring receive_completions;
    _Atomic bool closing;
};

/* Checks the mapped connection rings' header: its magic, version, id and ring lengths. */
static int check_file(const uint8_t *file, uint64_t id)
{
    if (SN_CONN_MAGIC != sn_get_i32(file + SN_CONN_MAGIC_OFFSET) ||
        SN_ABI_VERSION != sn_load_acquire_i32(file + SN_CONN_VERSION_OFFSET) ||
        (uint64_t)sn_get_i64(file + SN_CONN_ID_OFFSET) != id ||
        SN_CONN_REQUEST_LENGTH != sn_get_i32(file + SN_CONN_REQUEST_LENGTH_OFFSET) ||
        SN_CONN_COMPLETION_LENGTH != sn_get_i32(file + SN_CONN_COMPLETION_LENGTH_OFFSET))
    {
        return sn_fail(SN_ERR_CORRUPT, "the connection memory is not connection %llu of IPC version %d",
            (unsigned long long)id, SN_ABI_VERSION);
    }
    return SN_OK;
}

/* OPEN_MEMORY for connection c->id on a connection of its own to DIR/nic.sock: its rings, mapped at c->file. */
static int open_rings(sn_nic *nic, sn_conn *c)
{
    const int socket_fd = sn_connect_socket(nic);
    if (socket_fd < 0)
    {
        return SN_ERR_NO_NIC == socket_fd ? SN_ERR_NIC_STOPPED : socket_fd;
    }
    uint8_t open[SN_OBJECT_SIZE] = {0};
    sn_put_i64(open + SN_MSG_CLIENT_ID, (int64_t)nic->client_id);
    sn_put_i64(open + SN_MSG_CORRELATION_ID, sn_next_correlation(nic));
    sn_put_i64(open + SN_MSG_TOKEN, nic->token);
    sn_put_i64(open + SN_OBJECT_ID, (int64_t)c->id);
    int fd;
    const int answer = sn_socket_exchange(nic, socket_fd, SN_CMD_OPEN_MEMORY, open, sizeof open, sn_now_ms() + 10000,
        &fd);
    close(socket_fd);
    if (SN_ANS_OK != answer)
    {
        return answer;
    }
    const int result = sn_map_received(fd, SN_CONN_FILE_LENGTH, &c->file, "a connection's rings");
    close(fd);
    return result;
}

/* Builds a connection from a CONNECTION_READY in nic->reply (lock held). */
static int make_connection(sn_nic *nic, int answer, sn_conn **out)
{
    const uint8_t *reply = nic->reply;
    const int32_t kind = sn_get_i32(reply + SN_READY_KIND);
    const int32_t streams = sn_get_i32(reply + SN_READY_STREAMS);
    if (SN_ANS_CONNECTION_READY != answer || nic->reply_length < SN_READY_FILE + 4 ||
        (SN_TRANSPORT_SPRAY != kind && SN_TRANSPORT_ROCEV2 != kind) || streams < 1 || streams > 65536)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC answered with a type %d answer of %d B (kind %d, %d streams)", answer,
            nic->reply_length, kind, streams);
    }
    sn_conn *c = calloc(1, sizeof *c);
    if (NULL == c)
    {
        return sn_fail(SN_ERR_NO_MEMORY, "no memory for a connection");
    }
    *c = (sn_conn){.nic = nic, .id = (uint64_t)sn_get_i64(reply + SN_READY_ID), .transport = kind,
        .local_id = (uint32_t)sn_get_i32(reply + SN_READY_LOCAL_ID), .streams = streams,
        .plane = sn_get_i32(reply + SN_READY_PLANE)};
    c->endpoint = (struct sn_endpoint){.qpn = c->local_id, .psn = (uint32_t)sn_get_i32(reply + SN_READY_PSN),
        .ipv4 = (uint32_t)sn_get_i32(reply + SN_READY_IPV4), .mtu = (uint32_t)sn_get_i32(reply + SN_READY_MTU)};
    memcpy(c->endpoint.ipv6, reply + SN_READY_IPV6, sizeof c->endpoint.ipv6);
    int result = open_rings(nic, c);
    if (SN_OK == result)
    {
        result = check_file(c->file, c->id);
        uint8_t *ring = c->file + SN_CONN_HEADER_LENGTH;
        if (SN_OK == result)
        {
            result = sn_ring_init(&c->requests, ring, SN_CONN_REQUEST_LENGTH, SN_WR_SIZE);
        }
        ring += SN_CONN_REQUEST_LENGTH;
        if (SN_OK == result)
        {
            result = sn_ring_init(&c->send_completions, ring, SN_CONN_COMPLETION_LENGTH, COMPLETION_MAX_BODY);
        }
        ring += SN_CONN_COMPLETION_LENGTH;
        if (SN_OK == result)
        {
            result = sn_ring_init(&c->receive_completions, ring, SN_CONN_COMPLETION_LENGTH, COMPLETION_MAX_BODY);
        }
        if (SN_OK != result)
        {
            munmap(c->file, SN_CONN_FILE_LENGTH);
        }
    }
    if (SN_OK != result)
    {
        free(c);
        return result;
    }
    c->next = nic->connections;
    nic->connections = c;
    *out = c;
    return SN_OK;
}

/* CONNECT, ACCEPT, CREATE_QUEUE_PAIR: one message, one answer. */
static int open_connection(sn_nic *nic, int32_t type, int timeout_ms, int32_t planes,
    const struct sn_peer_address *peer, sn_conn **out)
{
    if (NULL == nic || NULL == out || timeout_ms < 0 || timeout_ms > SN_MAX_TIMEOUT_MS)
    {
        return sn_fail(SN_ERR_INVALID, "needs a NIC, a result pointer and a timeout in 0..%d ms", SN_MAX_TIMEOUT_MS);
    }
    uint8_t command[SN_CONNECT_SIZE] = {0};
    sn_put_i32(command + SN_CONNECT_TIMEOUT_MS, timeout_ms);
    sn_put_i32(command + SN_CONNECT_PLANES, planes);
    for (int p = 0; NULL != peer && p < planes; p++)
    {
        sn_put_i32(command + SN_CONNECT_IPV4 + 4 * p, (int32_t)peer[p].ipv4);
        memcpy(command + SN_CONNECT_IPV6 + 16 * p, peer[p].ipv6, sizeof peer[p].ipv6);
    }
    pthread_mutex_lock(&nic->lock);
    int result = nic->closing ? sn_fail(SN_ERR_INVALID_STATE, "the NIC handle is closing") :
        sn_command(nic, type, command, sizeof command, 10000 + (int64_t)timeout_ms);
    if (SN_ERR_FAILED == result && SN_CMD_ACCEPT == type && NULL != strstr(sn_last_error(), "no peer connected within"))
    {
        result = SN_ERR_TIMEOUT; /* the NIC's word for an accept that found nobody */
    }
    if (result >= 0)
    {
        result = make_connection(nic, result, out);
    }
    pthread_mutex_unlock(&nic->lock);
    return result;
}

int sn_connect(sn_nic *nic, const uint32_t *peer_ipv4, int planes, int timeout_ms, sn_conn **conn)
{
    if (NULL == peer_ipv4 || planes < 1 || planes > SN_MAX_PLANES)
    {
        return sn_fail(SN_ERR_INVALID, "sn_connect needs the peer's address on each plane (1..%d)", SN_MAX_PLANES);
    }
    struct sn_peer_address peer[SN_MAX_PLANES] = {0};
    for (int p = 0; p < planes; p++)
    {
        peer[p].ipv4 = peer_ipv4[p];
    }
    return open_connection(nic, SN_CMD_CONNECT, timeout_ms, planes, peer, conn);
}

int sn_connect_addr(sn_nic *nic, const struct sn_peer_address *peer, int planes, int timeout_ms, sn_conn **conn)
{
    if (NULL == peer || planes < 1 || planes > SN_MAX_PLANES)
    {
        return sn_fail(SN_ERR_INVALID, "sn_connect_addr needs the peer's address on each plane (1..%d)", SN_MAX_PLANES);
    }
    return open_connection(nic, SN_CMD_CONNECT, timeout_ms, planes, peer, conn);
}

int sn_accept(sn_nic *nic, int timeout_ms, sn_conn **conn)
{
    return open_connection(nic, SN_CMD_ACCEPT, timeout_ms, 0, NULL, conn);
}

int sn_create_qp(sn_nic *nic, int plane, sn_conn **conn)
{
    return open_connection(nic, SN_CMD_CREATE_QUEUE_PAIR, 0, plane, NULL, conn);
}

int sn_connect_qp(sn_conn *conn, const struct sn_endpoint *remote, int timeout_ms)
{
    if (NULL == conn || NULL == remote || SN_TRANSPORT_ROCEV2 != conn->transport || timeout_ms < 1 ||
        timeout_ms > SN_MAX_TIMEOUT_MS)
    {
        return sn_fail(SN_ERR_INVALID, "sn_connect_qp needs a RoCEv2 queue pair, the peer's endpoint and a timeout "
            "in 1..%d ms", SN_MAX_TIMEOUT_MS);
    }
    sn_nic *nic = conn->nic;
    uint8_t command[SN_CONNECT_QP_SIZE] = {0};
    sn_put_i64(command + SN_CONNECT_QP_ID, (int64_t)conn->id);
    sn_put_i32(command + SN_CONNECT_QP_QPN, (int32_t)remote->qpn);
    sn_put_i32(command + SN_CONNECT_QP_PSN, (int32_t)remote->psn);
    sn_put_i32(command + SN_CONNECT_QP_IPV4, (int32_t)remote->ipv4);
    sn_put_i32(command + SN_CONNECT_QP_MTU, (int32_t)remote->mtu);
    sn_put_i32(command + SN_CONNECT_QP_TIMEOUT_MS, timeout_ms);
    memcpy(command + SN_CONNECT_QP_IPV6, remote->ipv6, sizeof remote->ipv6);
    pthread_mutex_lock(&nic->lock);
    const int answer = sn_command(nic, SN_CMD_CONNECT_QUEUE_PAIR, command, sizeof command, 10000 + (int64_t)timeout_ms);
    pthread_mutex_unlock(&nic->lock);
    if (answer >= 0 && SN_ANS_OK != answer)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC answered CONNECT_QUEUE_PAIR with a type %d answer", answer);
    }
    return answer < 0 ? answer : SN_OK;
}

static void forget(sn_nic *nic, sn_conn *conn)
{
    for (sn_conn **at = &nic->connections; NULL != *at; at = &(*at)->next)
    {
        if (*at == conn)
        {
            *at = conn->next;
            break;
        }
    }
    munmap(conn->file, SN_CONN_FILE_LENGTH);
    free(conn);
}

int sn_close_conn(sn_conn *conn, int timeout_ms, struct sn_drain *drain)
{
    if (NULL == conn || timeout_ms < 0 || timeout_ms > SN_MAX_TIMEOUT_MS)
    {
        return sn_fail(SN_ERR_INVALID, "sn_close_conn needs a connection and a timeout in 0..%d ms", SN_MAX_TIMEOUT_MS);
    }
    sn_nic *nic = conn->nic;
    atomic_store_explicit(&conn->closing, true, memory_order_release);
    uint8_t command[SN_OBJECT_SIZE] = {0};
    sn_put_i64(command + SN_OBJECT_ID, (int64_t)conn->id);
    sn_put_i32(command + SN_OBJECT_TIMEOUT_MS, timeout_ms);
    pthread_mutex_lock(&nic->lock);
    int result = sn_command(nic, SN_CMD_CLOSE_CONNECTION, command, sizeof command, 10000 + (int64_t)timeout_ms);
    if (result >= 0)
    {
        if (SN_ANS_CONNECTION_CLOSED != result || nic->reply_length < SN_CLOSED_SIZE)
        {
            result = sn_fail(SN_ERR_CORRUPT, "the NIC answered CLOSE_CONNECTION with a type %d answer of %d B", result,
                nic->reply_length);
        }
        else
        {
            if (NULL != drain)
            {
                *drain = (struct sn_drain){.posted_sends = (uint64_t)sn_get_i64(nic->reply + SN_CLOSED_SENDS),
                    .posted_receives = (uint64_t)sn_get_i64(nic->reply + SN_CLOSED_RECEIVES),
                    .waiting = (uint32_t)sn_get_i32(nic->reply + SN_CLOSED_WAITING),
                    .idle = 0 != sn_get_i32(nic->reply + SN_CLOSED_IDLE)};
            }
            result = SN_OK;
        }
    }
    forget(nic, conn);
    pthread_mutex_unlock(&nic->lock);
    return result;
}

void sn_connections_release_all(sn_nic *nic)
{
    while (NULL != nic->connections)
    {
        forget(nic, nic->connections);
    }
}

int sn_conn_transport(const sn_conn *conn)
{
    return conn->transport;
}

uint32_t sn_conn_local_id(const sn_conn *conn)
{
    return conn->local_id;
}

int sn_conn_streams(const sn_conn *conn)
{
    return conn->streams;
}

int sn_conn_endpoint(const sn_conn *conn, struct sn_endpoint *endpoint)
{
    if (NULL == conn || NULL == endpoint || SN_TRANSPORT_ROCEV2 != conn->transport)
    {
        return sn_fail(SN_ERR_INVALID, "only a RoCEv2 queue pair has an endpoint");
    }
    *endpoint = conn->endpoint;
    return SN_OK;
}

// ---------------------------------------------------------------- the fast path

static int check_post(sn_conn *conn, int stream)
{
    if (atomic_load_explicit(&conn->closing, memory_order_acquire) ||
        0 == sn_load_acquire_i64(conn->nic->ctl + SN_CTL_HEARTBEAT_OFFSET))
    {
        return SN_ERR_INVALID_STATE;
    }
    return stream < 0 || stream >= conn->streams ? SN_ERR_INVALID : SN_OK;
}

int sn_post_send(sn_conn *conn, int stream, const struct sn_send_wr *wr)
{
    const int state = check_post(conn, stream);
    if (SN_OK != state)
    {
        return state;
    }
    if (wr->opcode < SN_WR_RDMA_WRITE || wr->opcode > SN_WR_RDMA_READ || wr->length > INT32_MAX)
    {
        return SN_ERR_INVALID;
    }
    const int32_t index = sn_ring_claim(&conn->requests, SN_REC_SEND_REQUEST, SN_WR_SIZE);
    if (index < 0)
    {
        return index;
    }
    uint8_t *r = conn->requests.base + index;
    sn_put_i64(r + SN_WR_ID, (int64_t)wr->wr_id);
    sn_put_i64(r + SN_WR_LOCAL_ADDRESS, (int64_t)wr->local_addr);
    sn_put_i64(r + SN_WR_REMOTE_ADDRESS, (int64_t)wr->remote_addr);
    sn_put_i32(r + SN_WR_LKEY, (int32_t)wr->lkey);
    sn_put_i32(r + SN_WR_LENGTH, (int32_t)wr->length);
    sn_put_i32(r + SN_WR_RKEY, (int32_t)wr->rkey);
    sn_put_i32(r + SN_WR_IMMEDIATE, (int32_t)wr->imm_data);
    sn_put_i32(r + SN_WR_STREAM, stream);
    r[SN_WR_OPCODE] = (uint8_t)wr->opcode;
    r[SN_WR_FLAGS] = (uint8_t)(wr->flags & (SN_SEND_SIGNALED | SN_SEND_SOLICITED));
    r[SN_WR_FLAGS + 1] = 0;
    r[SN_WR_FLAGS + 2] = 0;
    sn_ring_commit(&conn->requests, index);
    return SN_OK;
}

int sn_post_recv(sn_conn *conn, int stream, const struct sn_recv_wr *wr)
{
    const int state = check_post(conn, stream);
    if (SN_OK != state)
    {
        return state;
    }
    if (wr->length > INT32_MAX)
    {
        return SN_ERR_INVALID;
    }
    const int32_t index = sn_ring_claim(&conn->requests, SN_REC_RECEIVE_REQUEST, SN_WR_SIZE);
    if (index < 0)
    {
        return index;
    }
    uint8_t *r = conn->requests.base + index;
    memset(r, 0, SN_WR_SIZE);
    sn_put_i64(r + SN_WR_ID, (int64_t)wr->wr_id);
    sn_put_i64(r + SN_WR_LOCAL_ADDRESS, (int64_t)wr->addr);
    sn_put_i32(r + SN_WR_LKEY, (int32_t)wr->lkey);
    sn_put_i32(r + SN_WR_LENGTH, (int32_t)wr->length);
    sn_put_i32(r + SN_WR_STREAM, stream);
    sn_ring_commit(&conn->requests, index);
    return SN_OK;
}

struct poll_target
{
    struct sn_wc *wc;
    int filled;
};

/* A completion record (copied and length-checked by the ring reader); a code out of range reads as an error. */
static bool on_completion(void *context, int32_t type, const uint8_t *body, int32_t length)
{
    struct poll_target *target = context;
    if (SN_REC_COMPLETION != type || length < SN_WC_SIZE)
    {
        return true; /* not a completion: nothing to hand out */
    }
    struct sn_wc *wc = &target->wc[target->filled++];
    const int status = body[SN_WC_STATUS];
    const int opcode = body[SN_WC_OPCODE];
    wc->wr_id = (uint64_t)sn_get_i64(body + SN_WC_ID);
    wc->byte_len = (uint32_t)sn_get_i32(body + SN_WC_BYTE_LENGTH);
    wc->imm_data = (uint32_t)sn_get_i32(body + SN_WC_IMMEDIATE);
    wc->qp_num = (uint32_t)sn_get_i32(body + SN_WC_QP_NUMBER);
    wc->status = status <= SN_WC_GENERAL_ERR ? status : SN_WC_GENERAL_ERR;
    wc->opcode = opcode <= SN_WC_RECV_RDMA_WITH_IMM ? opcode : SN_WC_SEND;
    wc->has_imm = 0 != body[SN_WC_HAS_IMMEDIATE];
    return true;
}

/* Passes of the completion ring one poll makes at most. */
#define POLL_PASSES 4

int sn_poll_ring(sn_ring *ring, struct sn_wc *wc, int max)
{
    if (NULL == wc || max < 0)
    {
        return SN_ERR_INVALID;
    }
    struct poll_target target = {wc, 0};
    int read = 0;
    /* records that are no completions are consumed but hand out nothing: read until max are filled or none left, a
     * few passes at most (a NIC that writes nothing else must not hold a poll, which never waits) */
    for (int pass = 0; pass < POLL_PASSES && target.filled < max; pass++)
    {
        read = sn_ring_read(ring, on_completion, &target, max - target.filled);
        if (read <= 0)
        {
            break;
        }
    }
    /* completions taken before a record the NIC broke are handed out (their records are gone from the ring); the
     * broken one stays where it is, and the next poll says so */
    return read < 0 && 0 == target.filled ? read : target.filled;
}

int sn_poll_send_cq(sn_conn *conn, struct sn_wc *wc, int max)
{
    return sn_poll_ring(&conn->send_completions, wc, max);
}

int sn_poll_recv_cq(sn_conn *conn, struct sn_wc *wc, int max)
{
    return sn_poll_ring(&conn->receive_completions, wc, max);
}
