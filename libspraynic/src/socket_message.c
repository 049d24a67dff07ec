#include "internal.h"
#include <sys/socket.h>
#include <unistd.h>

/*
 * The one place that builds and takes apart an I12 socket message with its SCM_RIGHTS descriptors: the library's
 * commands (commands.c) and the C tests' fake NIC (tests/test_ring.c) both go through it.
 */

ssize_t sn_send_with_fd(int socket_fd, const uint8_t *bytes, size_t length, int fd)
{
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = length};
    union
    {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr header = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0)
    {
        header.msg_control = control.bytes;
        header.msg_controllen = sizeof control.bytes;
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&header);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    }
    return sendmsg(socket_fd, &header, MSG_NOSIGNAL);
}

ssize_t sn_receive_with_fds(int socket_fd, uint8_t *bytes, size_t capacity, struct sn_received *received)
{
    *received = (struct sn_received){.fd = -1};
    union
    {
        char bytes[CMSG_SPACE(SN_RECEIVED_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = bytes, .iov_len = capacity};
    struct msghdr header = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes,
        .msg_controllen = sizeof control.bytes};
    const ssize_t got = recvmsg(socket_fd, &header, MSG_CMSG_CLOEXEC);
    if (got < 0)
    {
        return got;
    }
    received->truncated = 0 != (header.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
    for (struct cmsghdr *cmsg = CMSG_FIRSTHDR(&header); NULL != cmsg; cmsg = CMSG_NXTHDR(&header, cmsg))
    {
        if (SOL_SOCKET != cmsg->cmsg_level || SCM_RIGHTS != cmsg->cmsg_type)
        {
            received->other = true;
            continue;
        }
        const size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t k = 0; k < count; k++)
        {
            int fd;
            memcpy(&fd, CMSG_DATA(cmsg) + k * sizeof(int), sizeof fd);
            if (received->fds == 0)
            {
                received->fd = fd; /* the one a message may carry: the caller's to close */
            }
            else
            {
                close(fd); /* any more are refused: never left open in this process */
            }
            received->fds++;
        }
    }
    return got;
}

void sn_received_close(struct sn_received *received)
{
    if (received->fd >= 0)
    {
        close(received->fd);
        received->fd = -1;
    }
}
