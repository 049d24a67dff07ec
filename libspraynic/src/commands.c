/*
 * Commands and their answers (docs/IPC.md, Commands): a command goes into the control file's to-NIC ring with this
 * client's id, a fresh correlation id and its token; its answer comes back in this client's answer ring, or, for a
 * client the NIC does not know (any more), on the broadcast. The wait ends with the answer, or when the NIC stops
 * beating, bumps its command ring epoch (it reset the ring, the command may be lost) or takes too long.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *command_name(int32_t type)
{
    static const char *const names[] = {"?", "ADD_CLIENT", "KEEPALIVE", "CLOSE_CLIENT", "REGISTER", "DEREGISTER",
        "CONNECT", "ACCEPT", "CREATE_QUEUE_PAIR", "CONNECT_QUEUE_PAIR", "CLOSE_CONNECTION"};
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

/* One message on DIR/nic.sock (I12): type, a reserved word, the command; memory_fd as its one descriptor. */
static int send_with_memory(sn_nic *nic, int32_t type, const uint8_t *body, int32_t length, int memory_fd)
{
    if (!sn_heartbeat_fresh(nic->ctl))
    {
        return sn_fail(SN_ERR_NIC_STOPPED, "the NIC (pid %lld) has stopped", (long long)nic->pid);
    }
    uint8_t message[SN_SOCKET_HEADER_LENGTH + SN_MAX_COMMAND_LENGTH] = {0};
    if (length > SN_MAX_COMMAND_LENGTH)
    {
        return sn_fail(SN_ERR_INVALID, "a %s of %d B is longer than a command", command_name(type), length);
    }
    sn_put_i32(message, type);
    memcpy(message + SN_SOCKET_HEADER_LENGTH, body, (size_t)length);
    const int socket_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (socket_fd < 0)
    {
        return sn_fail_errno("cannot make a socket to reach the NIC");
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    memcpy(address.sun_path, nic->socket_path, strlen(nic->socket_path) + 1);
    if (0 != connect(socket_fd, (const struct sockaddr *)&address, sizeof address))
    {
        const int error = errno;
        close(socket_fd);
        return sn_fail(SN_ERR_NIC_STOPPED, "cannot connect to the NIC's socket %s: %s", nic->socket_path,
            strerror(error));
    }
    struct iovec iov = {.iov_base = message, .iov_len = SN_SOCKET_HEADER_LENGTH + (size_t)length};
    union
    {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr header = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes,
        .msg_controllen = sizeof control.bytes};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&header);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &memory_fd, sizeof(int));
    const ssize_t sent = sendmsg(socket_fd, &header, MSG_NOSIGNAL);
    const int error = errno;
    close(socket_fd);
    if (sent != (ssize_t)iov.iov_len)
    {
        return sn_fail(SN_ERR_NIC_STOPPED, "cannot send %s on %s: %s", command_name(type), nic->socket_path,
            sent < 0 ? strerror(error) : "cut short");
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

int sn_command(sn_nic *nic, int32_t type, uint8_t *body, int32_t length, int64_t wait_ms)
{
    return sn_command_with_memory(nic, type, body, length, wait_ms, -1);
}

int sn_command_with_memory(sn_nic *nic, int32_t type, uint8_t *body, int32_t length, int64_t wait_ms, int memory_fd)
{
    const int32_t epoch = sn_load_acquire_i32(nic->ctl + SN_CTL_EPOCH_OFFSET);
    const int64_t correlation = sn_ring_next_correlation_id(&nic->to_nic);
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
        if (0 == work && 0 == nic->reply_type)
        {
            const int problem = check_nic(nic, type, epoch, deadline);
            if (SN_OK != problem)
            {
                return problem;
            }
            idle(&idle_count);
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

int sn_map_named(sn_nic *nic, const char *prefix, int32_t field, uint64_t length, uint8_t **memory)
{
    const char *text;
    const int n = sn_reply_string(nic, field, &text);
    if (n < 0)
    {
        return n;
    }
    const size_t prefix_length = strlen(prefix);
    bool plain = n > (int)prefix_length && n < SN_MAX_FILE_NAME_BYTES && 0 == memcmp(text, prefix, prefix_length);
    for (int i = 0; plain && i < n; i++)
    {
        plain = (text[i] >= 'a' && text[i] <= 'z') || (text[i] >= '0' && text[i] <= '9') || '-' == text[i];
    }
    if (!plain)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC named a file \"%.*s\", not a plain %s* name", n < 64 ? n : 64, text,
            prefix);
    }
    char name[SN_MAX_FILE_NAME_BYTES];
    memcpy(name, text, (size_t)n);
    name[n] = '\0';
    const int fd = openat(nic->dir_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
    {
        return sn_fail_errno("cannot open the file the NIC named");
    }
    struct stat st;
    int result = SN_OK;
    if (0 != fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (uint64_t)st.st_size < length)
    {
        /* a shorter file would fault this process at its first access beyond the end */
        result = sn_fail(SN_ERR_CORRUPT, "%s is not a regular file of this user of at least %llu B", name,
            (unsigned long long)length);
    }
    else
    {
        *memory = mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (MAP_FAILED == *memory)
        {
            result = sn_fail_errno("cannot map the file the NIC named");
        }
    }
    close(fd);
    return result;
}
