/*
 * Reaching a NIC: its control file checked and mapped, this client's answer file made, ADD_CLIENT, keepalives from
 * a thread of the library's own, and leaving (docs/IPC.md, Client lifecycle).
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
 * Checks and maps nic.ctl. SN_OK with *ctl mapped; SN_ERR_NO_NIC or SN_ERR_NIC_STOPPED while waiting may help;
 * SN_ERR_VERSION or SN_ERR_CORRUPT when it will not.
 */
static int map_control_file(int dir_fd, const char *dir, uint8_t **ctl)
{
    const int fd = openat(dir_fd, SN_CTL_FILE, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
    {
        return sn_fail(SN_ERR_NO_NIC, "no NIC serves %s: there is no %s in it (start one with: spraynic nic ... "
            "--ipc-dir %s)", dir, SN_CTL_FILE, dir);
    }
    struct stat st;
    if (0 != fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < SN_CTL_HEADER_LENGTH)
    {
        close(fd);
        return sn_fail(SN_ERR_NO_NIC, "%s/%s is not (yet) a SprayNIC control file", dir, SN_CTL_FILE);
    }
    if (st.st_uid != geteuid())
    {
        close(fd);
        return sn_fail(SN_ERR_NOT_PERMITTED, "%s/%s belongs to another user", dir, SN_CTL_FILE);
    }
    const size_t mapped = st.st_size >= SN_CTL_FILE_LENGTH ? SN_CTL_FILE_LENGTH : SN_CTL_HEADER_LENGTH;
    uint8_t *memory = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == memory)
    {
        return sn_fail_errno("cannot map the NIC's control file");
    }
    int result = SN_OK;
    const int32_t version = sn_load_acquire_i32(memory + SN_CTL_VERSION_OFFSET);
    if (SN_CTL_MAGIC != sn_get_i32(memory + SN_CTL_MAGIC_OFFSET) || 0 == version)
    {
        result = sn_fail(SN_ERR_NO_NIC, "%s/%s is not (yet) a SprayNIC control file", dir, SN_CTL_FILE);
    }
    else if (SN_ABI_VERSION != version)
    {
        result = sn_fail(SN_ERR_VERSION, "the NIC serving %s speaks IPC version %d, this client %d: use a client "
            "of the NIC's version", dir, version, SN_ABI_VERSION);
    }
    else if (SN_CTL_FILE_LENGTH != mapped || SN_CTL_TO_NIC_LENGTH != sn_get_i32(memory + SN_CTL_TO_NIC_LENGTH_OFFSET) ||
        SN_CTL_TO_CLIENTS_LENGTH != sn_get_i32(memory + SN_CTL_TO_CLIENTS_LENGTH_OFFSET))
    {
        result = sn_fail(SN_ERR_CORRUPT, "%s/%s is %lld B with rings of %d and %d B, not the %d B of version %d", dir,
            SN_CTL_FILE, (long long)st.st_size, sn_get_i32(memory + SN_CTL_TO_NIC_LENGTH_OFFSET),
            sn_get_i32(memory + SN_CTL_TO_CLIENTS_LENGTH_OFFSET), SN_CTL_FILE_LENGTH, SN_ABI_VERSION);
    }
    else
    {
        const int32_t mode = sn_get_i32(memory + SN_CTL_MODE_OFFSET);
        const int32_t planes = sn_get_i32(memory + SN_CTL_PLANES_OFFSET);
        if ((SN_TRANSPORT_SPRAY != mode && SN_TRANSPORT_ROCEV2 != mode) || planes < 1)
        {
            result = sn_fail(SN_ERR_CORRUPT, "%s/%s names transport %d and %d planes", dir, SN_CTL_FILE, mode, planes);
        }
        else if (!sn_heartbeat_fresh(memory))
        {
            result = sn_fail(SN_ERR_NIC_STOPPED, "the NIC that served %s (pid %lld) has stopped", dir,
                (long long)sn_get_i64(memory + SN_CTL_PID_OFFSET));
        }
    }
    if (SN_OK != result)
    {
        munmap(memory, mapped);
        return result;
    }
    *ctl = memory;
    return SN_OK;
}

/* Makes client-<32 random hex digits>, mode 0600, never through an existing name or link, and maps it. */
static int make_answer_file(sn_nic *nic)
{
    uint8_t random[16];
    if (sizeof random != getrandom(random, sizeof random, 0))
    {
        return sn_fail_errno("cannot draw a random answer file name");
    }
    int n = snprintf(nic->answer_name, sizeof nic->answer_name, "%s", SN_ANSWER_PREFIX);
    for (size_t i = 0; i < sizeof random; i++)
    {
        n += snprintf(nic->answer_name + n, sizeof nic->answer_name - (size_t)n, "%02x", random[i]);
    }
    const int fd = openat(nic->dir_fd, nic->answer_name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
    {
        return sn_fail_errno("cannot create the answer file");
    }
    int result = SN_OK;
    if (0 != fchmod(fd, 0600) || 0 != ftruncate(fd, SN_ANSWER_FILE_LENGTH))
    {
        result = sn_fail_errno("cannot size the answer file");
    }
    else
    {
        nic->answers_memory = mmap(NULL, SN_ANSWER_FILE_LENGTH, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (MAP_FAILED == nic->answers_memory)
        {
            nic->answers_memory = NULL;
            result = sn_fail_errno("cannot map the answer file");
        }
    }
    close(fd);
    if (SN_OK != result)
    {
        unlinkat(nic->dir_fd, nic->answer_name, 0);
    }
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
        unlinkat(nic->dir_fd, nic->answer_name, 0); /* the NIC removes it too, unless it stopped */
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

static int join(sn_nic *nic)
{
    uint8_t add[SN_ADD_CLIENT_FILE + 4 + SN_MAX_FILE_NAME_BYTES];
    const int32_t name_length = (int32_t)strlen(nic->answer_name);
    memset(add, 0, sizeof add);
    sn_put_i64(add + SN_ADD_CLIENT_PID, (int64_t)getpid());
    sn_put_i32(add + SN_ADD_CLIENT_FILE, name_length);
    memcpy(add + SN_ADD_CLIENT_FILE + 4, nic->answer_name, (size_t)name_length);
    const int answer = sn_command(nic, SN_CMD_ADD_CLIENT, add, SN_ADD_CLIENT_FILE + 4 + name_length, 10000);
    if (answer < 0)
    {
        return answer;
    }
    const int64_t timeout_ms = sn_get_i64(nic->reply + SN_OK_VALUE);
    const uint64_t client_id = (uint64_t)sn_get_i64(nic->reply + SN_MSG_CLIENT_ID);
    if (SN_ANS_OK != answer || nic->reply_length < SN_OK_SIZE || timeout_ms <= 0 || 0 == client_id)
    {
        return sn_fail(SN_ERR_CORRUPT, "the NIC answered ADD_CLIENT with a type %d answer of %d B (client %llu, "
            "timeout %lld ms)", answer, nic->reply_length, (unsigned long long)client_id, (long long)timeout_ms);
    }
    nic->client_id = client_id;
    nic->token = sn_get_i64(nic->reply + SN_MSG_TOKEN);
    nic->client_timeout_ms = timeout_ms;
    return SN_OK;
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
            map_control_file(nic->dir_fd, dir, &nic->ctl);
        if (SN_OK == result || (SN_ERR_NO_NIC != result && SN_ERR_NIC_STOPPED != result) || sn_now_ms() >= deadline)
        {
            break;
        }
        if (nic->dir_fd >= 0)
        {
            close(nic->dir_fd);
            nic->dir_fd = -1;
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
        result = make_answer_file(nic);
    }
    if (SN_OK == result)
    {
        result = sn_ring_init(&nic->answers, nic->answers_memory, SN_ANSWER_FILE_LENGTH, SN_MAX_ANSWER_LENGTH);
    }
    if (SN_OK == result)
    {
        result = join(nic);
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
