/*
 * libspraynic's tests that need no NIC: the ring buffer and the broadcast receiver at the byte level, and a fake
 * NIC (a thread of this program with a control file of its own making) that answers with what no honest NIC
 * writes. Every case must end in an error code, never in a crash or a hang.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(condition, ...) do { if (!(condition)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf(" (last error: %s)\n", sn_last_error()); } } while (0)

// ---------------------------------------------------------------- the ring buffer

struct expected
{
    int next;
    int bad;
};

static bool on_numbered(void *context, int32_t type, const uint8_t *body, int32_t length)
{
    struct expected *e = context;
    if (type != 5 || length != 1 + e->next % 50 || body[0] != (uint8_t)e->next || body[length - 1] != (uint8_t)e->next)
    {
        e->bad++;
    }
    e->next++;
    return true;
}

/* The memory of a 4 KiB ring and its trailer, zeroed and aligned as the NIC's are; the caller frees it. */
#define RING_LENGTH (4096 + SN_RING_TRAILER_LENGTH)

static uint8_t *ring_memory(void)
{
    uint8_t *memory = aligned_alloc(64, (size_t)RING_LENGTH);
    memset(memory, 0, (size_t)RING_LENGTH);
    return memory;
}

static void test_ring_round_trip_with_padding(void)
{
    const int64_t length = RING_LENGTH;
    uint8_t *memory = ring_memory();
    sn_ring producer;
    sn_ring consumer;
    CHECK(SN_OK == sn_ring_init(&producer, memory, length, 64), "init");
    CHECK(SN_OK == sn_ring_init(&consumer, memory, length, 64), "init");
    struct expected seen = {0, 0};
    int written = 0;
    uint8_t body[64];
    for (int round = 0; round < 400; round++) /* many laps of a 4 KiB ring: every wrap has its padding record */
    {
        int in_round = 0;
        while (true)
        {
            const int32_t n = 1 + written % 50;
            memset(body, (uint8_t)written, (size_t)n);
            const int result = sn_ring_write(&producer, 5, body, n);
            if (SN_ERR_QUEUE_FULL == result)
            {
                break;
            }
            CHECK(SN_OK == result, "write %d: %d", written, result);
            written++;
            in_round++;
            if (in_round == 3 + round % 40)
            {
                break;
            }
        }
        CHECK(sn_ring_read(&consumer, on_numbered, &seen, 1000) >= 0, "read");
    }
    CHECK(seen.next == written && 0 == seen.bad, "read %d of %d records, %d bad", seen.next, written, seen.bad);
    int zeroes = 1;
    for (int i = 0; i < 4096; i++)
    {
        zeroes &= 0 == memory[i];
    }
    CHECK(zeroes, "the consumer zeroes what it consumed");
    int64_t head;
    int64_t tail;
    memcpy(&head, memory + 4096 + SN_RING_HEAD_OFFSET, 8);
    memcpy(&tail, memory + 4096 + SN_RING_TAIL_OFFSET, 8);
    CHECK(head == tail && head > 4096 * 50, "head %lld, tail %lld", (long long)head, (long long)tail);
    CHECK(SN_ERR_INVALID == sn_ring_claim(&producer, 5, 65), "a message over the longest is refused");
    CHECK(SN_ERR_INVALID == sn_ring_claim(&producer, 0, 8), "type 0 is refused");
    free(memory);
}

static bool count(void *context, int32_t type, const uint8_t *body, int32_t length)
{
    (void)type;
    (void)body;
    (void)length;
    (*(int *)context)++;
    return true;
}

/* A ring whose first record header is (length, type) as a hostile producer wrote it. */
static int read_hostile(int32_t length, int32_t type, int *records)
{
    static uint8_t memory[1024 + SN_RING_TRAILER_LENGTH] __attribute__((aligned(64)));
    memset(memory, 0, sizeof memory);
    sn_put_i32(memory, length);
    sn_put_i32(memory + 4, type);
    sn_ring ring;
    sn_ring_init(&ring, memory, sizeof memory, 64);
    *records = 0;
    return sn_ring_read(&ring, count, records, 10);
}

static void test_ring_reader_refuses_what_no_producer_writes(void)
{
    int records;
    CHECK(SN_ERR_CORRUPT == read_hostile(0x7FFFFFF8, 3, &records), "a record longer than the ring");
    CHECK(SN_ERR_CORRUPT == read_hostile(4, 3, &records), "a record shorter than its header");
    CHECK(SN_ERR_CORRUPT == read_hostile(16, 0, &records), "a record of type 0");
    CHECK(SN_ERR_CORRUPT == read_hostile(8 + 65, 3, &records), "a body over the longest message");
    CHECK(SN_ERR_CORRUPT == read_hostile(INT32_MIN, 3, &records), "a claim of -2^31");
    CHECK(SN_ERR_CORRUPT == read_hostile(-2000, 3, &records), "a claim past the end");
    CHECK(0 == read_hostile(-16, 3, &records) && 0 == records, "a claim in progress is waited for");
    CHECK(1 == read_hostile(16, 3, &records) && 1 == records, "an honest record");
    CHECK(0 == read_hostile(1024, SN_PADDING_TYPE, &records) && 0 == records, "padding to the end");
    uint8_t bad[100];
    sn_ring ring;
    CHECK(SN_ERR_CORRUPT == sn_ring_init(&ring, bad, 1000 + SN_RING_TRAILER_LENGTH, 64), "not a power of two");
}

// ---------------------------------------------------------------- the broadcast receiver

/* Agrona's transmitter, as the test's NIC: intent, record, latest, tail. */
static void transmit(uint8_t *memory, int32_t capacity, int32_t type, const uint8_t *body, int32_t length)
{
    uint8_t *trailer = memory + capacity;
    int64_t tail = sn_get_i64(trailer + SN_BROADCAST_TAIL_OFFSET);
    int32_t offset = (int32_t)(tail & (capacity - 1));
    const int32_t aligned = sn_align8(length + 8);
    if (capacity - offset < aligned)
    {
        sn_store_release_i64(trailer + SN_BROADCAST_TAIL_INTENT_OFFSET, tail + (capacity - offset) + aligned);
        sn_put_i32(memory + offset, capacity - offset);
        sn_put_i32(memory + offset + 4, SN_PADDING_TYPE);
        tail += capacity - offset;
        offset = 0;
    }
    else
    {
        sn_store_release_i64(trailer + SN_BROADCAST_TAIL_INTENT_OFFSET, tail + aligned);
    }
    sn_put_i32(memory + offset, length + 8);
    sn_put_i32(memory + offset + 4, type);
    memcpy(memory + offset + 8, body, (size_t)length);
    sn_put_i64(trailer + SN_BROADCAST_LATEST_OFFSET, tail);
    sn_store_release_i64(trailer + SN_BROADCAST_TAIL_OFFSET, tail + aligned);
}

struct last
{
    int32_t type;
    int32_t length;
    uint8_t first;
    int count;
};

static bool keep_last(void *context, int32_t type, const uint8_t *body, int32_t length)
{
    struct last *last = context;
    last->type = type;
    last->length = length;
    last->first = length > 0 ? body[0] : 0;
    last->count++;
    return true;
}

/* A ring shared with the NIC and other clients: positions no producer writes are refused, never written through. */
static void test_ring_producer_refuses_positions_no_producer_writes(void)
{
    const int64_t length = RING_LENGTH;
    uint8_t *memory = ring_memory();
    sn_ring producer;
    CHECK(SN_OK == sn_ring_init(&producer, memory, length, 64), "init");
    uint8_t body[16] = {1};
    uint8_t *trailer_at = memory + 4096;
    const int64_t hostile[][2] = {{12, 0}, {-8, 0}, {64, 128}, {INT64_MAX - 7, -INT64_MAX}};
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++)
    {
        sn_put_i64(trailer_at + SN_RING_TAIL_OFFSET, hostile[i][0]);
        sn_put_i64(trailer_at + SN_RING_HEAD_OFFSET, hostile[i][1]);
        sn_put_i64(trailer_at + SN_RING_HEAD_CACHE_OFFSET, hostile[i][1]);
        /* before: a misaligned tail gave misaligned atomics and a padding header past the data, the last pair an
         * overflowed sum */
        CHECK(SN_ERR_CORRUPT == sn_ring_write(&producer, 1, body, sizeof body), "tail %lld, head %lld refused",
            (long long)hostile[i][0], (long long)hostile[i][1]);
    }
    sn_put_i64(trailer_at + SN_RING_TAIL_OFFSET, 0);
    sn_put_i64(trailer_at + SN_RING_HEAD_OFFSET, 0);
    sn_put_i64(trailer_at + SN_RING_HEAD_CACHE_OFFSET, 0);
    CHECK(SN_OK == sn_ring_write(&producer, 1, body, sizeof body), "and written once they are right again");
    free(memory);
}

/* Completions before a record the NIC broke are handed out, and the broken one is reported by the next poll. */
static void test_completions_before_a_broken_record(void)
{
    const int64_t length = RING_LENGTH;
    uint8_t *memory = ring_memory();
    sn_ring completions;
    sn_ring nic_side;
    CHECK(SN_OK == sn_ring_init(&completions, memory, length, SN_MAX_ANSWER_LENGTH) &&
        SN_OK == sn_ring_init(&nic_side, memory, length, SN_MAX_ANSWER_LENGTH), "init");
    uint8_t completion[SN_WC_SIZE] = {0};
    sn_put_i64(completion + SN_WC_ID, 41);
    CHECK(SN_OK == sn_ring_write(&nic_side, SN_REC_COMPLETION, completion, sizeof completion), "a completion");
    const int32_t next = (int32_t)sn_align8(SN_RECORD_HEADER_LENGTH + SN_WC_SIZE);
    sn_put_i32(memory + next, 0x7FFFFFF0); /* a record longer than the ring */
    struct sn_wc wc[4];
    /* before: the error, and the completion, whose record was consumed, lost with it */
    CHECK(1 == sn_poll_ring(&completions, wc, 4) && 41 == wc[0].wr_id, "the completion before it is handed out");
    CHECK(SN_ERR_CORRUPT == sn_poll_ring(&completions, wc, 4), "and the next poll reports the broken record");
    free(memory);
}

static void test_broadcast(void)
{
    enum { CAPACITY = 1024 };
    static uint8_t memory[CAPACITY + SN_BROADCAST_TRAILER_LENGTH] __attribute__((aligned(64)));
    uint8_t body[200];
    sn_broadcast receiver;
    CHECK(SN_OK == sn_broadcast_init(&receiver, memory, sizeof memory), "init");
    struct last last = {0};
    for (int i = 0; i < 100; i++) /* across many wraps, each with a padding record */
    {
        memset(body, i, sizeof body);
        transmit(memory, CAPACITY, 102, body, 24 + i % 100);
        CHECK(1 == sn_broadcast_receive(&receiver, keep_last, &last) && last.type == 102 &&
            last.length == 24 + i % 100 && last.first == (uint8_t)i, "message %d: type %d, %d B, first %d", i,
            last.type, last.length, last.first);
    }
    CHECK(0 == sn_broadcast_receive(&receiver, keep_last, &last), "nothing more");
    for (int i = 0; i < 20; i++)
    {
        transmit(memory, CAPACITY, 102, body, 150); /* laps the receiver */
    }
    last.count = 0;
    while (sn_broadcast_receive(&receiver, keep_last, &last) > 0 && last.count < 100)
    {
    }
    CHECK(last.count < 20, "a lapped receiver skips what was overwritten (%d)", last.count);
    body[0] = 77;
    transmit(memory, CAPACITY, 102, body, 30);
    last.count = 0;
    while (sn_broadcast_receive(&receiver, keep_last, &last) > 0)
    {
    }
    CHECK(1 == last.count && 77 == last.first, "and then takes new ones (%d, %d)", last.count, last.first);
    /* a length that cannot be real */
    transmit(memory, CAPACITY, 102, body, 30);
    const int64_t tail = sn_get_i64(memory + CAPACITY + SN_BROADCAST_TAIL_OFFSET);
    sn_put_i32(memory + ((tail - 40) & (CAPACITY - 1)), 0x7FFFFFF0);
    CHECK(0 == sn_broadcast_receive(&receiver, keep_last, &last), "a corrupt record is skipped, not read");
    transmit(memory, CAPACITY, 102, body, 30);
    CHECK(1 == sn_broadcast_receive(&receiver, keep_last, &last), "and the next is read");
}

// ---------------------------------------------------------------- a fake NIC

enum scenario { ANSWER_UNSEALED, ANSWER_BADLY, ANSWER_ENDLESS_TIMEOUT };

/* What the fake NIC plants in the command ring's shared correlation counter. */
#define SHARED_COUNTER_PLANTED 1000000

struct fake_nic
{
    char dir[256];
    uint8_t *ctl;
    int ctl_fd;               /* the control memory, a sealed memfd handed over on HELLO */
    enum scenario scenario;
    volatile bool stop;
    volatile bool dead;
    uint8_t *answers_memory;
    sn_ring commands;
    sn_ring answers;
    int registers;
    int64_t bad_tokens;
    int64_t shared_counter_ids; /* commands whose correlation id the command ring's shared counter gave */
    int listen_fd;            /* DIR/nic.sock */
    int sealed_regions;       /* REGISTERs that came with a memfd sealed against shrinking, growing and new seals */
    int unsealed_regions;     /* ... with anything else */
};

/* A memfd of length bytes, sealed (seals) and mapped at *memory; exits on failure. */
static int make_memfd(uint64_t length, int seals, uint8_t **memory)
{
    const int fd = memfd_create("fake-nic", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || 0 != ftruncate(fd, (off_t)length) || (0 != seals && 0 != fcntl(fd, F_ADD_SEALS, seals)))
    {
        printf("FAIL cannot make a memfd: %s\n", strerror(errno));
        exit(1);
    }
    *memory = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return fd;
}

/* The fake NIC's announcement DIR/nic.ctl (version) and its control memory (a sealed memfd at *fd). */
static uint8_t *make_control_file(const char *dir, int32_t version, int32_t to_nic_length, int64_t heartbeat, int *fd)
{
    uint8_t *ctl;
    *fd = make_memfd(SN_CTL_FILE_LENGTH, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, &ctl);
    sn_put_i32(ctl + SN_CTL_MAGIC_OFFSET, SN_CTL_MAGIC);
    sn_put_i64(ctl + SN_CTL_PID_OFFSET, getpid());
    sn_put_i64(ctl + SN_CTL_HEARTBEAT_OFFSET, heartbeat);
    sn_put_i64(ctl + SN_CTL_CLIENT_TIMEOUT_OFFSET, 5000);
    sn_put_i32(ctl + SN_CTL_TO_NIC_LENGTH_OFFSET, to_nic_length);
    sn_put_i32(ctl + SN_CTL_TO_CLIENTS_LENGTH_OFFSET, SN_CTL_TO_CLIENTS_LENGTH);
    sn_put_i32(ctl + SN_CTL_PLANES_OFFSET, 1);
    sn_put_i32(ctl + SN_CTL_IPV4_OFFSET, 0x0A000001);
    sn_store_release_i32(ctl + SN_CTL_VERSION_OFFSET, version);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, SN_CTL_FILE);
    unlink(path);
    const int file = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (file < 0 || SN_CTL_HEADER_LENGTH != write(file, ctl, SN_CTL_HEADER_LENGTH))
    {
        printf("FAIL cannot make %s: %s\n", path, strerror(errno));
        exit(1);
    }
    close(file);
    return ctl;
}

static void answer(struct fake_nic *nic, int32_t type, uint8_t *body, int32_t length, int64_t correlation)
{
    sn_put_i64(body + SN_MSG_CLIENT_ID, 7);
    sn_put_i64(body + SN_MSG_CORRELATION_ID, correlation);
    sn_ring_write(&nic->answers, type, body, length);
}

static int32_t put_string(uint8_t *at, const char *text)
{
    const int32_t n = (int32_t)strlen(text);
    sn_put_i32(at, n);
    memcpy(at + 4, text, (size_t)n);
    return 4 + n;
}

static bool on_fake_command(void *context, int32_t type, const uint8_t *body, int32_t length);

static int listen_fake_socket(const char *dir)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s/%s", dir, SN_SOCKET_FILE);
    unlink(address.sun_path);
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || 0 != bind(fd, (const struct sockaddr *)&address, sizeof address) || 0 != listen(fd, 8))
    {
        printf("FAIL cannot listen on %s: %s\n", address.sun_path, strerror(errno));
        exit(1);
    }
    return fd;
}

/* One answer on the fake NIC's socket: type, version, body; fd (if >= 0) as its one descriptor. */
static void reply(int connection, int32_t type, uint8_t *body, int32_t length, int64_t correlation, int fd)
{
    uint8_t message[SN_SOCKET_HEADER_LENGTH + SN_MAX_ANSWER_LENGTH] = {0};
    sn_put_i64(body + SN_MSG_CLIENT_ID, 7);
    sn_put_i64(body + SN_MSG_CORRELATION_ID, correlation);
    sn_put_i32(message, type);
    sn_put_i32(message + SN_SOCKET_VERSION_OFFSET, SN_ABI_VERSION);
    memcpy(message + SN_SOCKET_HEADER_LENGTH, body, (size_t)length);
    sn_send_with_fd(connection, message, SN_SOCKET_HEADER_LENGTH + (size_t)length, fd);
}

/* HELLO and ADD_CLIENT, answered on the socket with the control memory and a new answer ring. */
static void on_fake_socket_command(struct fake_nic *nic, int connection, int32_t type, const uint8_t *body)
{
    const int64_t correlation = sn_get_i64(body + SN_MSG_CORRELATION_ID);
    uint8_t out[SN_MAX_ANSWER_LENGTH] = {0};
    if (SN_CMD_HELLO == type)
    {
        sn_put_i64(out + SN_OK_VALUE, SN_CTL_FILE_LENGTH);
        reply(connection, SN_ANS_OK, out, SN_OK_SIZE, correlation, nic->ctl_fd);
        return;
    }
    /* ANSWER_UNSEALED: an answer ring its sender could still truncate under the client */
    const int seals = ANSWER_UNSEALED == nic->scenario ? 0 : F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    const int fd = make_memfd(SN_ANSWER_FILE_LENGTH, seals, &nic->answers_memory);
    sn_ring_init(&nic->answers, nic->answers_memory, SN_ANSWER_FILE_LENGTH, SN_MAX_ANSWER_LENGTH);
    sn_put_i64(out + SN_MSG_TOKEN, 99);
    /* ANSWER_ENDLESS_TIMEOUT: a client timeout no NIC gives, whose keepalive interval overflowed in nanoseconds */
    sn_put_i64(out + SN_OK_VALUE, ANSWER_ENDLESS_TIMEOUT == nic->scenario ? 100000000000000LL : 5000);
    reply(connection, SN_ANS_OK, out, SN_OK_SIZE, correlation, fd);
    close(fd);
}

/*
 * The fake NIC's socket: HELLO and ADD_CLIENT answered there; a REGISTER's one descriptor has its seals checked
 * before it is closed.
 */
static void serve_fake_socket(struct fake_nic *nic)
{
    const int connection = accept4(nic->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (connection < 0)
    {
        return;
    }
    while (true)
    {
        uint8_t message[SN_SOCKET_HEADER_LENGTH + SN_MAX_COMMAND_LENGTH];
        struct sn_received received;
        const ssize_t got = sn_receive_with_fds(connection, message, sizeof message, &received);
        if (got < SN_SOCKET_HEADER_LENGTH + SN_MSG_HEADER_LENGTH)
        {
            sn_received_close(&received);
            break;
        }
        const int fd = received.fd;
        const int32_t type = sn_get_i32(message);
        if (SN_CMD_HELLO == type || SN_CMD_ADD_CLIENT == type)
        {
            sn_received_close(&received); /* these carry none */
            on_fake_socket_command(nic, connection, type, message + SN_SOCKET_HEADER_LENGTH);
            continue;
        }
        const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
        if (fd >= 0 && want == (fcntl(fd, F_GET_SEALS) & want) && 0 != ftruncate(fd, 0) && EPERM == errno)
        {
            nic->sealed_regions++;
        }
        else
        {
            nic->unsealed_regions++;
        }
        if (fd >= 0)
        {
            close(fd);
        }
        on_fake_command(nic, type, message + SN_SOCKET_HEADER_LENGTH, (int32_t)got - SN_SOCKET_HEADER_LENGTH);
    }
    close(connection);
}

static bool on_fake_command(void *context, int32_t type, const uint8_t *body, int32_t length)
{
    (void)length;
    struct fake_nic *nic = context;
    const int64_t correlation = sn_get_i64(body + SN_MSG_CORRELATION_ID);
    uint8_t out[SN_MAX_ANSWER_LENGTH] = {0};
    if (99 != sn_get_i64(body + SN_MSG_TOKEN) && SN_CMD_KEEPALIVE != type)
    {
        nic->bad_tokens++;
    }
    if (correlation >= SHARED_COUNTER_PLANTED && correlation < SHARED_COUNTER_PLANTED + 1000)
    {
        nic->shared_counter_ids++;
    }
    if (SN_CMD_REGISTER == type)
    {
        sn_put_i64(out + SN_REGION_LENGTH, sn_get_i64(body + SN_REGISTER_LENGTH));
        switch (nic->registers++)
        {
            case 0: /* a region of another length */
                sn_put_i64(out + SN_REGION_LENGTH, 1);
                answer(nic, SN_ANS_REGION_READY, out, SN_REGION_FILE + put_string(out + SN_REGION_FILE, ""), correlation);
                break;
            case 1: /* an answer shorter than its fields */
                answer(nic, SN_ANS_REGION_READY, out, SN_REGION_FILE - 8, correlation);
                break;
            case 2: /* a refusal, with its code and reason */
                sn_put_i32(out + SN_ERROR_COMMAND, SN_CMD_REGISTER);
                sn_put_i32(out + SN_ERROR_CODE, 2);
                answer(nic, SN_ANS_ERROR, out, SN_ERROR_TEXT + put_string(out + SN_ERROR_TEXT, "limit of 1 region"),
                    correlation);
                break;
            case 3: /* a region */
                sn_put_i64(out + SN_REGION_ADDRESS, 0x10000);
                sn_put_i64(out + SN_REGION_ID, 3);
                answer(nic, SN_ANS_REGION_READY, out, SN_REGION_FILE + put_string(out + SN_REGION_FILE, ""), correlation);
                break;
            case 4: /* no answer: the NIC reset its command ring instead */
                sn_store_release_i32(nic->ctl + SN_CTL_EPOCH_OFFSET, 1);
                break;
            default: /* no answer: the NIC stops */
                nic->dead = true;
                sn_store_release_i64(nic->ctl + SN_CTL_HEARTBEAT_OFFSET, 0);
                break;
        }
        return true;
    }
    if (SN_CMD_CLOSE_CLIENT == type)
    {
        answer(nic, SN_ANS_OK, out, SN_OK_SIZE, correlation);
    }
    return true;
}

static void *run_fake_nic(void *argument)
{
    struct fake_nic *nic = argument;
    sn_ring_init(&nic->commands, nic->ctl + SN_CTL_HEADER_LENGTH, SN_CTL_TO_NIC_LENGTH, SN_MAX_COMMAND_LENGTH);
    while (!nic->stop)
    {
        if (!nic->dead)
        {
            sn_store_release_i64(nic->ctl + SN_CTL_HEARTBEAT_OFFSET, sn_now_ms());
        }
        sn_ring_read(&nic->commands, on_fake_command, nic, 16);
        serve_fake_socket(nic);
        const struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void start_fake(struct fake_nic *fake, const char *dir, enum scenario scenario, int32_t to_nic_length,
    pthread_t *thread)
{
    *fake = (struct fake_nic){.scenario = scenario};
    snprintf(fake->dir, sizeof fake->dir, "%s", dir);
    fake->ctl = make_control_file(dir, SN_ABI_VERSION, to_nic_length, sn_now_ms(), &fake->ctl_fd);
    /* a co-client's value in the command ring's shared correlation counter: no client draws its ids from it */
    sn_put_i64(fake->ctl + SN_CTL_HEADER_LENGTH + to_nic_length - SN_RING_TRAILER_LENGTH + SN_RING_CORRELATION_OFFSET,
        SHARED_COUNTER_PLANTED);
    fake->listen_fd = listen_fake_socket(dir);
    pthread_create(thread, NULL, run_fake_nic, fake);
}

static void stop_fake(struct fake_nic *fake, pthread_t thread)
{
    fake->stop = true;
    pthread_join(thread, NULL);
    if (NULL != fake->answers_memory)
    {
        munmap(fake->answers_memory, SN_ANSWER_FILE_LENGTH);
    }
    munmap(fake->ctl, SN_CTL_FILE_LENGTH);
    close(fake->ctl_fd);
    close(fake->listen_fd);
}

static void test_control_file_checks(const char dir[200])
{
    sn_nic *nic = NULL;
    char missing[512];
    snprintf(missing, sizeof missing, "%s/none", dir);
    CHECK(SN_ERR_NO_NIC == sn_open(missing, 0, &nic) && NULL == nic, "no directory");
    CHECK(SN_ERR_NO_NIC == sn_open(dir, 50, &nic), "no control file");
    int fd;
    uint8_t *ctl = make_control_file(dir, SN_ABI_VERSION + 1, SN_CTL_TO_NIC_LENGTH, sn_now_ms(), &fd);
    char next[64];
    snprintf(next, sizeof next, "speaks IPC version %d", SN_ABI_VERSION + 1);
    CHECK(SN_ERR_VERSION == sn_open(dir, 5000, &nic) && NULL != strstr(sn_last_error(), next),
        "a NIC of the next version is refused at once");
    munmap(ctl, SN_CTL_FILE_LENGTH);
    close(fd);
    ctl = make_control_file(dir, SN_ABI_VERSION - 1, SN_CTL_TO_NIC_LENGTH, sn_now_ms(), &fd);
    snprintf(next, sizeof next, "speaks IPC version %d", SN_ABI_VERSION - 1);
    CHECK(SN_ERR_VERSION == sn_open(dir, 5000, &nic) && NULL != strstr(sn_last_error(), next),
        "a NIC of the previous version is refused at once");
    munmap(ctl, SN_CTL_FILE_LENGTH);
    close(fd);
    ctl = make_control_file(dir, SN_ABI_VERSION, SN_CTL_TO_NIC_LENGTH, sn_now_ms(), &fd);
    CHECK(SN_ERR_NO_NIC == sn_open(dir, 50, &nic), "an announcement and nobody on the socket");
    munmap(ctl, SN_CTL_FILE_LENGTH);
    close(fd);
    /* a pipe planted as the announcement: before, the open of it waited for a writer for good */
    char announcement[512];
    snprintf(announcement, sizeof announcement, "%s/%s", dir, SN_CTL_FILE);
    unlink(announcement);
    CHECK(0 == mkfifo(announcement, 0600), "mkfifo: %s", strerror(errno));
    const int64_t before = sn_now_ms();
    CHECK(SN_ERR_NO_NIC == sn_open(dir, 50, &nic) && NULL != strstr(sn_last_error(), "not (yet) a SprayNIC control") &&
        sn_now_ms() - before < 5000, "a pipe for an announcement is not one, at once");
    unlink(announcement);
    struct fake_nic fake;
    pthread_t thread;
    start_fake(&fake, dir, ANSWER_BADLY, SN_CTL_TO_NIC_LENGTH * 2, &thread);
    CHECK(SN_ERR_CORRUPT == sn_open(dir, 0, &nic), "a to-NIC ring of another length");
    stop_fake(&fake, thread);
    start_fake(&fake, dir, ANSWER_BADLY, SN_CTL_TO_NIC_LENGTH, &thread);
    fake.dead = true;
    sn_store_release_i64(fake.ctl + SN_CTL_HEARTBEAT_OFFSET, sn_now_ms() - 60000);
    CHECK(SN_ERR_NIC_STOPPED == sn_open(dir, 0, &nic), "a stale heartbeat");
    sn_put_i32(fake.ctl + SN_CTL_MODE_OFFSET, 9);
    sn_store_release_i64(fake.ctl + SN_CTL_HEARTBEAT_OFFSET, sn_now_ms());
    CHECK(SN_ERR_CORRUPT == sn_open(dir, 0, &nic), "an unknown transport");
    stop_fake(&fake, thread);
}

/* A NIC whose socket's backlog is full (stalled, or a process on the path that never accepts): sn_open gives up. */
static void test_connect_bounded(const char *dir)
{
    int fd;
    uint8_t *ctl = make_control_file(dir, SN_ABI_VERSION, SN_CTL_TO_NIC_LENGTH, sn_now_ms(), &fd);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (snprintf(address.sun_path, sizeof address.sun_path, "%s/%s", dir, SN_SOCKET_FILE) >= (int)sizeof address.sun_path)
    {
        CHECK(false, "the socket path fits");
        return;
    }
    unlink(address.sun_path);
    const int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    CHECK(listener >= 0 && 0 == bind(listener, (const struct sockaddr *)&address, sizeof address) &&
        0 == listen(listener, 0), "a listener that never accepts");
    int queued[4];
    int filled = 0;
    for (; filled < 4; filled++)
    {
        queued[filled] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (0 != connect(queued[filled], (const struct sockaddr *)&address, sizeof address))
        {
            close(queued[filled]);
            break; /* EAGAIN: the backlog is full */
        }
    }
    CHECK(filled >= 1 && filled < 4, "its backlog filled (%d queued)", filled);
    sn_nic *nic = NULL;
    const int64_t start = sn_now_ms();
    /* before, the connect waited for as long as the backlog stayed full: for good */
    CHECK(SN_ERR_NO_NIC == sn_open(dir, 200, &nic) && NULL == nic, "a full backlog is no NIC");
    const int64_t took = sn_now_ms() - start;
    CHECK(took < SN_SOCKET_WAIT_MS + 3000, "given up after %lld ms", (long long)took);
    for (int i = 0; i < filled; i++)
    {
        close(queued[i]);
    }
    close(listener);
    munmap(ctl, SN_CTL_FILE_LENGTH);
    close(fd);
}

static void test_hostile_answers(const char dir[200])
{
    struct fake_nic fake;
    pthread_t thread;
    start_fake(&fake, dir, ANSWER_UNSEALED, SN_CTL_TO_NIC_LENGTH, &thread);
    sn_nic *nic = NULL;
    CHECK(SN_ERR_CORRUPT == sn_open(dir, 2000, &nic) && NULL == nic && NULL != strstr(sn_last_error(), "sealed"),
        "an answer ring its sender could truncate fails the open");
    stop_fake(&fake, thread);

    /* before, taken: its keepalive thread then spun holding its lock, and sn_close waited for it for good */
    start_fake(&fake, dir, ANSWER_ENDLESS_TIMEOUT, SN_CTL_TO_NIC_LENGTH, &thread);
    CHECK(SN_ERR_CORRUPT == sn_open(dir, 2000, &nic) && NULL == nic && NULL != strstr(sn_last_error(), "timeout"),
        "a client timeout no NIC gives fails the open");
    stop_fake(&fake, thread);

    start_fake(&fake, dir, ANSWER_BADLY, SN_CTL_TO_NIC_LENGTH, &thread);
    CHECK(SN_OK == sn_open(dir, 2000, &nic), "open");
    if (NULL != nic)
    {
        sn_mr *mr = NULL;
        CHECK(1 == sn_nic_planes(nic) && 0x0A000001 == sn_nic_ipv4(nic, 0) && 7 == sn_nic_client_id(nic), "header");
        CHECK(SN_ERR_CORRUPT == sn_reg_mr(nic, 4096, SN_ACCESS_LOCAL_WRITE, &mr), "a region of another length");
        CHECK(SN_ERR_CORRUPT == sn_reg_mr(nic, 4096, SN_ACCESS_LOCAL_WRITE, &mr), "an answer shorter than its fields");
        CHECK(SN_ERR_LIMIT == sn_reg_mr(nic, 4096, SN_ACCESS_LOCAL_WRITE, &mr) &&
            NULL != strstr(sn_last_error(), "limit of 1 region"), "a refusal, with the NIC's reason");
        CHECK(SN_OK == sn_reg_mr(nic, 4096, SN_ACCESS_LOCAL_WRITE, &mr) && 0x10000 == mr->addr && 4096 == mr->length,
            "a region");
        if (NULL != mr)
        {
            memset(mr->local, 0x5A, 4096); /* this process's view of its own memfd */
        }
        CHECK(SN_ERR_RING_RESET == sn_reg_mr(nic, 4096, SN_ACCESS_LOCAL_WRITE, &mr), "a command ring reset");
        CHECK(SN_ERR_INVALID == sn_reg_mr(nic, 4096, 0x100, &mr), "unknown access flags never reach the NIC");
        CHECK(1 == sn_nic_alive(nic), "alive");
        CHECK(SN_ERR_NIC_STOPPED == sn_reg_mr(nic, 4096, SN_ACCESS_LOCAL_WRITE, &mr), "the NIC stops during a call");
        CHECK(0 == sn_nic_alive(nic), "stopped");
        CHECK(SN_OK == sn_close(nic), "close without a NIC to tell");
        CHECK(0 == fake.bad_tokens, "every command carried the token (%lld did not)", (long long)fake.bad_tokens);
        CHECK(0 == fake.shared_counter_ids, "no correlation id came from the shared counter, which a co-client may "
            "rewind to have a stale answer taken (%lld did)", (long long)fake.shared_counter_ids);
        CHECK(6 == fake.sealed_regions && 0 == fake.unsealed_regions, "every REGISTER came with a memfd sealed "
            "against resizing that refuses ftruncate with EPERM (%d sealed, %d not)", fake.sealed_regions,
            fake.unsealed_regions);
    }
    stop_fake(&fake, thread);
}

/* test_ring [DIR]: the fake NIC's files go to a new directory in DIR (default /tmp), removed at the end. */
int main(int argc, char **argv)
{
    char dir[200]; /* the fake NIC's paths add a file name to it */
    if (snprintf(dir, sizeof dir, "%s/libspraynic-test-XXXXXX", argc > 1 ? argv[1] : "/tmp") >= (int)sizeof dir)
    {
        printf("FAIL the directory %s is too long\n", argv[1]);
        return 1;
    }
    if (NULL == mkdtemp(dir))
    {
        printf("FAIL mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_ring_round_trip_with_padding();
    test_ring_reader_refuses_what_no_producer_writes();
    test_ring_producer_refuses_positions_no_producer_writes();
    test_completions_before_a_broken_record();
    test_broadcast();
    test_control_file_checks(dir);
    test_connect_bounded(dir);
    test_hostile_answers(dir);
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (0 != system(command))
    {
        printf("could not remove %s\n", dir);
    }
    if (0 != failures)
    {
        printf("test_ring: %d failed\n", failures);
        return 1;
    }
    printf("test_ring: all passed\n");
    return 0;
}
