/*
 * Reaching a NIC: its announcement read, its control memory (HELLO) and this client's answer ring (ADD_CLIENT) taken
 * from DIR/nic.sock as sealed memfds, checked and mapped, keepalives from a thread of the library's own, and leaving
 * (docs/IPC.md, Client lifecycle).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t sn_now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now); /* the NIC beats epoch milliseconds */
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

bool sn_heartbeat_fresh(const uint8_t *ctl)
{
    const int64_t heartbeat = sn_load_acquire_i64(ctl + SN_CTL_HEARTBEAT_OFFSET);
    return 0 != heartbeat && sn_now_ms() - heartbeat <= SN_NIC_LIVENESS_TIMEOUT_MS;
}

static void sleep_ms(int ms)
{
    const struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

static const char *default_directory(char *buffer, size_t size)
{
    const char *configured = getenv("SPRAYNIC_IPC_DIR");
    if (NULL != configured && '\0' != configured[0])
    {
        return configured;
    }
    const struct passwd *user = getpwuid(geteuid());
    const char *name = NULL != user ? user->pw_name : getenv("USER");
    struct stat shm;
    const bool has_shm = 0 == stat("/dev/shm", &shm) && S_ISDIR(shm.st_mode);
    snprintf(buffer, size, "%s/spraynic-%s", has_shm ? "/dev/shm" : "/tmp", NULL != name ? name : "user");
    return buffer;
}

/*
 * Reads the announcement DIR/nic.ctl (a plain read: nothing of DIR is mapped). SN_OK when it announces a NIC of this
 * version; SN_ERR_NO_NIC while waiting may help; SN_ERR_VERSION when it will not.
 */
static int read_announcement(int dir_fd, const char *dir)
{
    /* O_NONBLOCK: a pipe planted at the name would otherwise hold the open for good (a regular file ignores it) */
    const int fd = openat(dir_fd, SN_CTL_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
    {
        return sn_fail(SN_ERR_NO_NIC, "no NIC serves %s: there is no %s in it (start one with: spraynic nic ... "
            "--ipc-dir %s)", dir, SN_CTL_FILE, dir);
    }
    uint8_t header[SN_CTL_HEADER_LENGTH];
    struct stat st;
    const bool regular = 0 == fstat(fd, &st) && S_ISREG(st.st_mode);
    const ssize_t got = regular ? pread(fd, header, sizeof header, 0) : -1;
    close(fd);
    if (got != (ssize_t)sizeof header)
    {
        return sn_fail(SN_ERR_NO_NIC, "%s/%s is not (yet) a SprayNIC control file", dir, SN_CTL_FILE);
    }
    if (st.st_uid != geteuid())
    {
        return sn_fail(SN_ERR_NOT_PERMITTED, "%s/%s belongs to another user", dir, SN_CTL_FILE);
    }
    const int32_t version = sn_get_i32(header + SN_CTL_VERSION_OFFSET);
    if (SN_CTL_MAGIC != sn_get_i32(header + SN_CTL_MAGIC_OFFSET) || 0 == version)
    {
        return sn_fail(SN_ERR_NO_NIC, "%s/%s is not (yet) a SprayNIC control file", dir, SN_CTL_FILE);
    }
    if (SN_ABI_VERSION != version)
    {
        return sn_fail(SN_ERR_VERSION, "the NIC serving %s speaks IPC version %d, this client %d: use a client "
            "of the NIC's version", dir, version, SN_ABI_VERSION);
    }
    return SN_OK;
}

/* Checks the control memory HELLO gave: magic, version, lengths, mode, planes, heartbeat. */
static int check_control(const uint8_t *memory, const char *dir)
{
    if (SN_CTL_MAGIC != sn_get_i32(memory + SN_CTL_MAGIC_OFFSET) ||
        SN_ABI_VERSION != sn_load_acquire_i32(memory + SN_CTL_VERSION_OFFSET) ||
        SN_CTL_TO_NIC_LENGTH != sn_get_i32(memory + SN_CTL_TO_NIC_LENGTH_OFFSET) ||
        SN_CTL_TO_CLIENTS_LENGTH != sn_get_i32(memory + SN_CTL_TO_CLIENTS_LENGTH_OFFSET))
    {
        return sn_fail(SN_ERR_CORRUPT, "the control memory of the NIC serving %s has version %d and rings of %d and %d "
            "B, not the %d and %d B of version %d", dir, sn_get_i32(memory + SN_CTL_VERSION_OFFSET),
            sn_get_i32(memory + SN_CTL_TO_NIC_LENGTH_OFFSET), sn_get_i32(memory + SN_CTL_TO_CLIENTS_LENGTH_OFFSET),
            SN_CTL_TO_NIC_LENGTH, SN_CTL_TO_CLIENTS_LENGTH, SN_ABI_VERSION);
    }
    const int32_t mode = sn_get_i32(memory + SN_CTL_MODE_OFFSET);
    const int32_t planes = sn_get_i32(memory + SN_CTL_PLANES_OFFSET);
    if ((SN_TRANSPORT_SPRAY != mode && SN_TRANSPORT_ROCEV2 != mode) || planes < 1)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC serving %s names transport %d and %d planes", dir, mode, planes);
    }
    if (!sn_heartbeat_fresh(memory))
    {
        return sn_fail(SN_ERR_NIC_STOPPED, "the NIC that served %s (pid %lld) has stopped", dir,
            (long long)sn_get_i64(memory + SN_CTL_PID_OFFSET));
    }
    return SN_OK;
}

/* HELLO on socket_fd: the control memory, checked and mapped at nic->ctl. */
static int hello(sn_nic *nic, int socket_fd, const char *dir, int64_t deadline)
{
    uint8_t command[SN_MSG_HEADER_LENGTH] = {0};
    int fd;
    const int answer = sn_socket_exchange(nic, socket_fd, SN_CMD_HELLO, command, sizeof command, deadline, &fd);
    if (SN_ANS_OK != answer)
    {
        return answer;
    }
    uint8_t *memory = NULL;
    int result = sn_map_received(fd, SN_CTL_FILE_LENGTH, &memory, "control memory");
    close(fd);
    if (SN_OK == result)
    {
        result = check_control(memory, dir);
        if (SN_OK != result)
        {
            munmap(memory, SN_CTL_FILE_LENGTH);
            return result;
        }
        nic->ctl = memory;
    }
    return result;
}

/* ADD_CLIENT on socket_fd: this client's answer ring, id, token and the NIC's client timeout. */
static int join(sn_nic *nic, int socket_fd, int64_t deadline)
{
    uint8_t add[SN_ADD_CLIENT_SIZE] = {0};
    sn_put_i64(add + SN_ADD_CLIENT_PID, (int64_t)getpid());
    int fd;
    const int answer = sn_socket_exchange(nic, socket_fd, SN_CMD_ADD_CLIENT, add, sizeof add, deadline, &fd);
    if (SN_ANS_OK != answer)
    {
        return answer;
    }
    const int result = sn_map_received(fd, SN_ANSWER_FILE_LENGTH, &nic->answers_memory, "an answer ring");
    close(fd);
    if (SN_OK != result)
    {
        return result;
    }
    const int64_t timeout_ms = sn_get_i64(nic->reply + SN_OK_VALUE);
    const uint64_t client_id = (uint64_t)sn_get_i64(nic->reply + SN_MSG_CLIENT_ID);
    if (timeout_ms <= 0 || timeout_ms > SN_MAX_CLIENT_TIMEOUT_MS || 0 == client_id)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC answered ADD_CLIENT with client %llu and a timeout of %lld ms",
            (unsigned long long)client_id, (long long)timeout_ms);
    }
    nic->client_id = client_id;
    nic->token = sn_get_i64(nic->reply + SN_MSG_TOKEN);
    nic->client_timeout_ms = timeout_ms;
    return SN_OK;
}

/* The announcement, then HELLO and ADD_CLIENT on one connection to DIR/nic.sock (docs/IPC.md I11). */
static int reach(sn_nic *nic, const char *dir, int64_t deadline)
{
    int result = read_announcement(nic->dir_fd, dir);
    if (SN_OK != result)
    {
        return result;
    }
    const int socket_fd = sn_connect_socket(nic);
    if (socket_fd < 0)
    {
        return socket_fd;
    }
    /* the announcement is this user's, so must be the process answering on the socket (IPC.md I10.12): one another
     * user bound there would be handed every region this client registers */
    struct ucred peer;
    socklen_t peer_length = sizeof peer;
    if (0 != getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length))
    {
        const int error = errno;
        close(socket_fd);
        return sn_fail(SN_ERR_NOT_PERMITTED, "cannot read who answers on %s: %s", nic->socket_path, strerror(error));
    }
    if (peer.uid != geteuid())
    {
        close(socket_fd);
        return sn_fail(SN_ERR_NOT_PERMITTED, "the process answering on %s (pid %d) runs as uid %u, not as this user",
            nic->socket_path, (int)peer.pid, (unsigned)peer.uid);
    }
    result = hello(nic, socket_fd, dir, deadline);
    if (SN_OK == result)
    {
        result = join(nic, socket_fd, deadline);
    }
    close(socket_fd);
    return result;
}

static void *send_keepalives(void *argument)
{
    sn_nic *nic = argument;
    const int64_t interval_ms = nic->client_timeout_ms / 5 > 10 ? nic->client_timeout_ms / 5 : 10;
    uint8_t keepalive[SN_MSG_HEADER_LENGTH];
    sn_put_i64(keepalive + SN_MSG_CLIENT_ID, (int64_t)nic->client_id);
    sn_put_i64(keepalive + SN_MSG_CORRELATION_ID, 0);
    sn_put_i64(keepalive + SN_MSG_TOKEN, nic->token);
    pthread_mutex_lock(&nic->keepalive_lock);
    while (nic->keepalive_running)
    {
        sn_ring_write(&nic->to_nic, SN_CMD_KEEPALIVE, keepalive, sizeof keepalive); /* full: the next one goes */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        const int64_t ns = until.tv_nsec + interval_ms * 1000000L;
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&nic->keepalive_stop, &nic->keepalive_lock, &until);
    }
    pthread_mutex_unlock(&nic->keepalive_lock);
    return NULL;
}

static void release(sn_nic *nic)
{
    if (NULL != nic->answers_memory)
    {
        munmap(nic->answers_memory, SN_ANSWER_FILE_LENGTH);
    }
    if (NULL != nic->ctl)
    {
        munmap(nic->ctl, SN_CTL_FILE_LENGTH);
    }
    if (nic->dir_fd >= 0)
    {
        close(nic->dir_fd);
    }
    pthread_mutex_destroy(&nic->lock);
    pthread_mutex_destroy(&nic->keepalive_lock);
    pthread_cond_destroy(&nic->keepalive_stop);
    free(nic);
}

int sn_open(const char *ipc_dir, int timeout_ms, sn_nic **out)
{
    if (NULL == out || timeout_ms < 0)
    {
        return sn_fail(SN_ERR_INVALID, "sn_open needs a result pointer and a timeout of at least 0 ms");
    }
    *out = NULL;
    char buffer[512];
    const char *dir = NULL != ipc_dir ? ipc_dir : default_directory(buffer, sizeof buffer);
    sn_nic *nic = calloc(1, sizeof *nic);
    if (NULL == nic)
    {
        return sn_fail(SN_ERR_NO_MEMORY, "no memory for a NIC handle");
    }
    nic->dir_fd = -1;
    if (getrandom(&nic->next_correlation, sizeof nic->next_correlation, 0) != (ssize_t)sizeof nic->next_correlation)
    {
        nic->next_correlation = (int64_t)sn_now_ms() ^ (int64_t)getpid() << 32; /* unpredictable enough without it */
    }
    nic->next_correlation &= INT64_MAX;
    if (snprintf(nic->socket_path, sizeof nic->socket_path, "%s/%s", dir, SN_SOCKET_FILE) >=
        (int)sizeof nic->socket_path)
    {
        free(nic);
        return sn_fail(SN_ERR_INVALID, "the IPC directory %s is too long for its socket's name: give a shorter one", dir);
    }
    pthread_mutex_init(&nic->lock, NULL);
    pthread_mutex_init(&nic->keepalive_lock, NULL);
    pthread_cond_init(&nic->keepalive_stop, NULL);
    const int64_t deadline = sn_now_ms() + timeout_ms;
    int result;
    while (true)
    {
        nic->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        result = nic->dir_fd < 0 ?
            sn_fail(SN_ERR_NO_NIC, "no NIC serves %s: cannot open it (%s)", dir, strerror(errno)) :
            reach(nic, dir, deadline > sn_now_ms() + 1000 ? deadline : sn_now_ms() + 1000);
        if (SN_OK == result || (SN_ERR_NO_NIC != result && SN_ERR_NIC_STOPPED != result) || sn_now_ms() >= deadline)
        {
            break;
        }
        if (nic->dir_fd >= 0)
        {
            close(nic->dir_fd);
            nic->dir_fd = -1;
        }
        if (NULL != nic->ctl)
        {
            munmap(nic->ctl, SN_CTL_FILE_LENGTH);
            nic->ctl = NULL;
        }
        sleep_ms(20);
    }
    if (SN_OK == result)
    {
        nic->pid = sn_get_i64(nic->ctl + SN_CTL_PID_OFFSET);
        nic->transport = sn_get_i32(nic->ctl + SN_CTL_MODE_OFFSET);
        nic->planes = sn_get_i32(nic->ctl + SN_CTL_PLANES_OFFSET);
        result = sn_ring_init(&nic->to_nic, nic->ctl + SN_CTL_HEADER_LENGTH, SN_CTL_TO_NIC_LENGTH, SN_MAX_COMMAND_LENGTH);
    }
    if (SN_OK == result)
    {
        result = sn_broadcast_init(&nic->refusals, nic->ctl + SN_CTL_HEADER_LENGTH + SN_CTL_TO_NIC_LENGTH,
            SN_CTL_TO_CLIENTS_LENGTH);
    }
    if (SN_OK == result)
    {
        result = sn_ring_init(&nic->answers, nic->answers_memory, SN_ANSWER_FILE_LENGTH, SN_MAX_ANSWER_LENGTH);
    }
    if (SN_OK == result)
    {
        nic->keepalive_running = true;
        if (0 != pthread_create(&nic->keepalive, NULL, send_keepalives, nic))
        {
            nic->keepalive_running = false;
            result = sn_fail(SN_ERR_SYSTEM, "cannot start the keepalive thread");
        }
    }
    if (SN_OK != result)
    {
        release(nic);
        return result;
    }
    *out = nic;
    return SN_OK;
}

int sn_close(sn_nic *nic)
{
    if (NULL == nic)
    {
        return sn_fail(SN_ERR_INVALID, "sn_close(NULL)");
    }
    int result = SN_OK;
    pthread_mutex_lock(&nic->lock);
    nic->closing = true;
    if (sn_heartbeat_fresh(nic->ctl))
    {
        uint8_t close_client[SN_MSG_HEADER_LENGTH] = {0};
        const int answer = sn_command(nic, SN_CMD_CLOSE_CLIENT, close_client, sizeof close_client, 10000);
        result = answer < 0 ? answer : SN_OK;
    }
    pthread_mutex_unlock(&nic->lock);
    pthread_mutex_lock(&nic->keepalive_lock);
    const bool running = nic->keepalive_running;
    nic->keepalive_running = false;
    pthread_cond_signal(&nic->keepalive_stop);
    pthread_mutex_unlock(&nic->keepalive_lock);
    if (running)
    {
        pthread_join(nic->keepalive, NULL);
    }
    sn_connections_release_all(nic);
    sn_regions_release_all(nic);
    release(nic);
    return result;
}

int sn_nic_transport(const sn_nic *nic)
{
    return nic->transport;
}

int sn_nic_planes(const sn_nic *nic)
{
    return nic->planes;
}

uint32_t sn_nic_ipv4(const sn_nic *nic, int plane)
{
    if (plane < 0 || plane >= nic->planes || plane >= SN_MAX_PLANES)
    {
        return 0;
    }
    return (uint32_t)sn_get_i32(nic->ctl + SN_CTL_IPV4_OFFSET + 4 * plane);
}

int sn_nic_ipv6(const sn_nic *nic, int plane, uint8_t ipv6[16])
{
    memset(ipv6, 0, 16);
    if (plane < 0 || plane >= nic->planes || plane >= SN_MAX_PLANES)
    {
        return 0;
    }
    memcpy(ipv6, nic->ctl + SN_CTL_IPV6_OFFSET + 16 * plane, 16);
    int any = 0;
    for (int i = 0; i < 16; i++)
    {
        any |= ipv6[i];
    }
    return 0 != any;
}

int64_t sn_nic_pid(const sn_nic *nic)
{
    return nic->pid;
}

uint64_t sn_nic_client_id(const sn_nic *nic)
{
    return nic->client_id;
}

int sn_nic_alive(const sn_nic *nic)
{
    return sn_heartbeat_fresh(nic->ctl) ? 1 : 0;
}
