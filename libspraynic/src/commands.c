/*
 * Commands and their answers (docs/IPC.md, Commands): a command goes into the control memory's to-NIC ring with this
 * client's id, a fresh correlation id and its token; its answer comes back in this client's answer ring, or, for a
 * client the NIC does not know (any more), on the broadcast. The wait ends with the answer, or when the NIC stops
 * beating, bumps its command ring epoch (it reset the ring, the command may be lost) or takes too long. HELLO,
 * ADD_CLIENT and OPEN_MEMORY go on DIR/nic.sock and are answered there, an OK with the NIC's sealed memory (I12).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *command_name(int32_t type)
{
    static const char *const names[] = {"?", "ADD_CLIENT", "KEEPALIVE", "CLOSE_CLIENT", "REGISTER", "DEREGISTER",
        "CONNECT", "ACCEPT", "CREATE_QUEUE_PAIR", "CONNECT_QUEUE_PAIR", "CLOSE_CONNECTION", "START_CAPTURE",
        "STOP_CAPTURE", "HELLO", "OPEN_MEMORY"};
    return type > 0 && type < (int32_t)(sizeof names / sizeof names[0]) ? names[type] : "?";
}

static const char *code_name(int32_t code)
{
    static const char *const names[] = {"?", "BAD_VALUE", "LIMIT", "UNKNOWN_OBJECT", "NOT_CONNECTED", "FAILED",
        "MALFORMED", "NOT_PERMITTED"};
    return code > 0 && code < (int32_t)(sizeof names / sizeof names[0]) ? names[code] : "UNKNOWN";
}

static void keep_reply(sn_nic *nic, int32_t type, const uint8_t *body, int32_t length)
{
    memcpy(nic->reply, body, (size_t)length); /* length <= SN_MAX_ANSWER_LENGTH: the ring reader's copy */
    memset(nic->reply + length, 0, sizeof nic->reply - (size_t)length);
    nic->reply_length = length;
    nic->reply_type = type;
}

/* An answer in this client's own ring: older answers (of calls that failed or timed out) are passed over. */
static bool on_answer(void *context, int32_t type, const uint8_t *body, int32_t length)
{
    sn_nic *nic = context;
    if (0 == nic->reply_type && length >= SN_MSG_HEADER_LENGTH &&
        sn_get_i64(body + SN_MSG_CORRELATION_ID) == nic->awaited_correlation)
    {
        keep_reply(nic, type, body, length);
    }
    return true;
}

/* A refusal on the broadcast, which every client sees: only the one for this client's command counts. */
static bool on_refusal(void *context, int32_t type, const uint8_t *body, int32_t length)
{
    sn_nic *nic = context;
    if (0 == nic->reply_type && SN_ANS_ERROR == type && length >= SN_MSG_HEADER_LENGTH &&
        (uint64_t)sn_get_i64(body + SN_MSG_CLIENT_ID) == nic->awaited_client &&
        sn_get_i64(body + SN_MSG_CORRELATION_ID) == nic->awaited_correlation)
    {
        keep_reply(nic, type, body, length);
    }
    return true;
}

static int check_nic(const sn_nic *nic, int32_t type, int32_t epoch, int64_t deadline)
{
    if (!sn_heartbeat_fresh(nic->ctl))
    {
        return sn_fail(SN_ERR_NIC_STOPPED, "the NIC (pid %lld) has stopped", (long long)nic->pid);
    }
    if (sn_load_acquire_i32(nic->ctl + SN_CTL_EPOCH_OFFSET) != epoch)
    {
        return sn_fail(SN_ERR_RING_RESET, "the NIC (pid %lld) reset its command ring, which some process corrupted, "
            "and %s may have been lost with it: retry the call", (long long)nic->pid, command_name(type));
    }
    if (sn_now_ms() >= deadline)
    {
        return sn_fail(SN_ERR_TIMEOUT, "the NIC (pid %lld) did not answer %s in time: is it overloaded, or did it "
            "time this client out?", (long long)nic->pid, command_name(type));
    }
    return SN_OK;
}

static void idle(int *idle_count)
{
    if (++*idle_count < 1000)
    {
        return; /* a quick answer comes within microseconds */
    }
    const struct timespec pause = {0, 100000}; /* a handshake may take seconds */
    nanosleep(&pause, NULL);
}

/* Turns an ERROR answer into the SN_ERR_* of its code, with the NIC's reason as this thread's last error. */
static int refusal(const sn_nic *nic, int32_t type)
{
    if (nic->reply_length < SN_ERROR_TEXT)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC answered %s with an ERROR of %d B", command_name(type),
            nic->reply_length);
    }
    const int32_t code = sn_get_i32(nic->reply + SN_ERROR_CODE);
    const char *text = "";
    int length = sn_reply_string(nic, SN_ERROR_TEXT, &text);
    if (length < 0)
    {
        text = "(no reason given)";
        length = (int)strlen(text);
    }
    const int error = code >= 1 && code <= 7 ? -20 - code : SN_ERR_REFUSED_OTHER;
    return sn_fail(error, "the NIC refused %s (%s): %.*s", command_name(type), code_name(code), length, text);
}

int sn_connect_socket(const sn_nic *nic)
{
    const int socket_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (socket_fd < 0)
    {
        return sn_fail_errno("cannot make a socket to reach the NIC");
    }
    /* a connect waits while the listener's backlog is full (a stalled NIC, or a process on the path that never
     * accepts), and so does a send: bounded, as every call of the library is */
    const struct timeval bound = {SN_SOCKET_WAIT_MS / 1000, (SN_SOCKET_WAIT_MS % 1000) * 1000};
    if (0 != setsockopt(socket_fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound))
    {
        const int error = errno;
        close(socket_fd);
        return sn_fail(SN_ERR_NO_NIC, "cannot bound the wait for %s: %s", nic->socket_path, strerror(error));
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    memcpy(address.sun_path, nic->socket_path, strlen(nic->socket_path) + 1);
    if (0 != connect(socket_fd, (const struct sockaddr *)&address, sizeof address))
    {
        const int error = errno;
        close(socket_fd);
        return sn_fail(SN_ERR_NO_NIC, "no NIC answers on %s: %s", nic->socket_path, strerror(error));
    }
    return socket_fd;
}

/* One message on a connection to DIR/nic.sock (I12): type, version, the command; memory_fd (if >= 0) its descriptor. */
static int send_message(const sn_nic *nic, int socket_fd, int32_t type, const uint8_t *body, int32_t length,
    int memory_fd)
{
    uint8_t message[SN_SOCKET_HEADER_LENGTH + SN_MAX_COMMAND_LENGTH] = {0};
    if (length > SN_MAX_COMMAND_LENGTH)
    {
        return sn_fail(SN_ERR_INVALID, "a %s of %d B is longer than a command", command_name(type), length);
    }
    sn_put_i32(message, type);
    sn_put_i32(message + SN_SOCKET_VERSION_OFFSET, SN_ABI_VERSION);
    memcpy(message + SN_SOCKET_HEADER_LENGTH, body, (size_t)length);
    const size_t bytes = SN_SOCKET_HEADER_LENGTH + (size_t)length;
    const ssize_t sent = sn_send_with_fd(socket_fd, message, bytes, memory_fd);
    if (sent != (ssize_t)bytes)
    {
        return sn_fail(SN_ERR_NIC_STOPPED, "cannot send %s on %s: %s", command_name(type), nic->socket_path,
            sent < 0 ? strerror(errno) : "cut short");
    }
    return SN_OK;
}

/* REGISTER on its own connection to DIR/nic.sock, with memory_fd as its one descriptor; answered in the answer ring. */
static int send_with_memory(sn_nic *nic, int32_t type, const uint8_t *body, int32_t length, int memory_fd)
{
    if (!sn_heartbeat_fresh(nic->ctl))
    {
        return sn_fail(SN_ERR_NIC_STOPPED, "the NIC (pid %lld) has stopped", (long long)nic->pid);
    }
    const int socket_fd = sn_connect_socket(nic);
    if (socket_fd < 0)
    {
        return SN_ERR_NO_NIC == socket_fd ? SN_ERR_NIC_STOPPED : socket_fd;
    }
    const int result = send_message(nic, socket_fd, type, body, length, memory_fd);
    close(socket_fd);
    return result;
}

int sn_socket_exchange(sn_nic *nic, int socket_fd, int32_t type, uint8_t *body, int32_t length, int64_t deadline,
    int *memory_fd)
{
    *memory_fd = -1;
    const int64_t correlation = sn_get_i64(body + SN_MSG_CORRELATION_ID);
    int result = send_message(nic, socket_fd, type, body, length, -1);
    if (SN_OK != result)
    {
        return result;
    }
    struct pollfd readable = {.fd = socket_fd, .events = POLLIN};
    int ready;
    do
    {
        const int64_t left = deadline - sn_now_ms();
        ready = left > 0 ? poll(&readable, 1, (int)(left < 1000 ? left : 1000)) : 0;
    }
    while ((ready < 0 && EINTR == errno) || (0 == ready && sn_now_ms() < deadline));
    if (ready <= 0)
    {
        return sn_fail(SN_ERR_TIMEOUT, "the NIC did not answer %s on %s in time", command_name(type), nic->socket_path);
    }
    uint8_t message[SN_SOCKET_HEADER_LENGTH + SN_MAX_ANSWER_LENGTH];
    struct sn_received received;
    const ssize_t got = sn_receive_with_fds(socket_fd, message, sizeof message, &received);
    if (got <= 0)
    {
        sn_received_close(&received);
        return sn_fail(SN_ERR_NO_NIC, "the NIC closed %s without answering %s (%s)", nic->socket_path,
            command_name(type), got < 0 ? strerror(errno) : "a NIC of another IPC version drops what it does not know");
    }
    const int32_t answer = got >= SN_SOCKET_HEADER_LENGTH ? sn_get_i32(message) : 0;
    const int32_t body_length = (int32_t)got - SN_SOCKET_HEADER_LENGTH;
    const int expected_fds = SN_ANS_OK == answer ? 1 : 0;
    if (received.truncated || received.other || received.fds != expected_fds ||
        (SN_ANS_OK != answer && SN_ANS_ERROR != answer) ||
        body_length < (SN_ANS_OK == answer ? SN_OK_SIZE : SN_ERROR_TEXT) ||
        SN_ABI_VERSION != sn_get_i32(message + SN_SOCKET_VERSION_OFFSET) ||
        sn_get_i64(message + SN_SOCKET_HEADER_LENGTH + SN_MSG_CORRELATION_ID) != correlation)
    {
        sn_received_close(&received);
        return sn_fail(SN_ERR_CORRUPT, "the NIC answered %s on its socket with a type %d message of %zd B, version %d "
            "and %d descriptor(s)", command_name(type), answer, got,
            got >= SN_SOCKET_HEADER_LENGTH ? sn_get_i32(message + SN_SOCKET_VERSION_OFFSET) : 0, received.fds);
    }
    memcpy(nic->reply, message + SN_SOCKET_HEADER_LENGTH, (size_t)body_length);
    memset(nic->reply + body_length, 0, sizeof nic->reply - (size_t)body_length);
    nic->reply_length = body_length;
    nic->reply_type = answer;
    if (SN_ANS_ERROR == answer)
    {
        return refusal(nic, type);
    }
    *memory_fd = received.fd;
    return SN_ANS_OK;
}

int sn_map_received(int fd, uint64_t length, uint8_t **memory, const char *what)
{
    const int seals = fcntl(fd, F_GET_SEALS);
    struct stat st;
    if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) != (F_SEAL_SHRINK | F_SEAL_SEAL) ||
        0 != (seals & F_SEAL_WRITE) || 0 != fstat(fd, &st) || (uint64_t)st.st_size < length)
    {
        /* memory the NIC could still shrink, or shorter than its use, would fault this process */
        return sn_fail(SN_ERR_CORRUPT, "the NIC sent %s that is not a memfd sealed against shrinking of at least %llu B "
            "(seals 0x%x)", what, (unsigned long long)length, seals);
    }
    *memory = mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == *memory)
    {
        *memory = NULL;
        return sn_fail_errno("cannot map the memory the NIC sent");
    }
    return SN_OK;
}

int sn_sealed_memory(uint64_t length, uint8_t **memory)
{
    const int fd = memfd_create("spraynic-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
    {
        return sn_fail_errno("memfd_create failed");
    }
    if (0 != ftruncate(fd, (off_t)length) ||
        0 != fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
    {
        const int result = sn_fail_errno("cannot size and seal a memfd");
        close(fd);
        return result;
    }
    *memory = mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == *memory)
    {
        const int result = sn_fail_errno("cannot map a sealed memfd");
        close(fd);
        return result;
    }
    return fd;
}

int64_t sn_next_correlation(sn_nic *nic)
{
    const int64_t id = nic->next_correlation;
    nic->next_correlation = (id + 1) & INT64_MAX;
    return id;
}

int sn_command(sn_nic *nic, int32_t type, uint8_t *body, int32_t length, int64_t wait_ms)
{
    return sn_command_with_memory(nic, type, body, length, wait_ms, -1);
}

int sn_command_with_memory(sn_nic *nic, int32_t type, uint8_t *body, int32_t length, int64_t wait_ms, int memory_fd)
{
    const int32_t epoch = sn_load_acquire_i32(nic->ctl + SN_CTL_EPOCH_OFFSET);
    const int64_t correlation = sn_next_correlation(nic);
    sn_put_i64(body + SN_MSG_CLIENT_ID, (int64_t)nic->client_id);
    sn_put_i64(body + SN_MSG_CORRELATION_ID, correlation);
    sn_put_i64(body + SN_MSG_TOKEN, nic->token);
    const int64_t deadline = sn_now_ms() + wait_ms;
    int idle_count = 0;
    int written;
    if (memory_fd >= 0)
    {
        written = send_with_memory(nic, type, body, length, memory_fd);
        if (SN_OK != written)
        {
            return written;
        }
    }
    while (memory_fd < 0 && (written = sn_ring_write(&nic->to_nic, type, body, length)) == SN_ERR_QUEUE_FULL)
    {
        const int problem = check_nic(nic, type, epoch, deadline);
        if (SN_OK != problem)
        {
            return problem;
        }
        idle(&idle_count);
    }
    if (SN_OK != written)
    {
        return sn_fail(written, "cannot write a %s of %d B into the command ring", command_name(type), length);
    }
    nic->awaited_correlation = correlation;
    nic->awaited_client = nic->client_id;
    nic->reply_type = 0;
    idle_count = 0;
    while (0 == nic->reply_type)
    {
        const int answers = sn_ring_read(&nic->answers, on_answer, nic, 16);
        if (answers < 0)
        {
            return answers; /* the NIC broke this client's answer ring */
        }
        int work = answers;
        if (0 == nic->reply_type)
        {
            work += sn_broadcast_receive(&nic->refusals, on_refusal, nic);
        }
        if (0 == nic->reply_type)
        {
            /* after every pass, not only an idle one: records that are not the answer (another client's refusals,
             * answers to nothing asked) that never stop coming must not hold the call past its deadline */
            const int problem = check_nic(nic, type, epoch, deadline);
            if (SN_OK != problem)
            {
                return problem;
            }
            if (0 == work)
            {
                idle(&idle_count);
            }
        }
    }
    return SN_ANS_ERROR == nic->reply_type ? refusal(nic, type) : nic->reply_type;
}

int sn_reply_string(const sn_nic *nic, int32_t field, const char **text)
{
    if (field + 4 > nic->reply_length)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC's answer of %d B ends before its string at %d", nic->reply_length,
            field);
    }
    const int32_t length = sn_get_i32(nic->reply + field);
    if (length < 0 || length > SN_MAX_STRING_BYTES || length > nic->reply_length - field - 4)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC's answer of %d B holds a string of %d B at %d", nic->reply_length,
            length, field);
    }
    *text = (const char *)nic->reply + field + 4;
    return length;
}
