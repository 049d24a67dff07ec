/* Error codes, their names, and each thread's last reason in words. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

int sn_fail(int code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return code;
}

int sn_fail_errno(const char *what)
{
    return sn_fail(SN_ERR_SYSTEM, "%s: %s", what, strerror(errno));
}

const char *sn_last_error(void)
{
    return last_error;
}

const char *sn_strerror(int error)
{
    switch (error)
    {
        case SN_OK: return "success";
        case SN_ERR_INVALID: return "invalid argument";
        case SN_ERR_NO_NIC: return "no NIC serves the IPC directory";
        case SN_ERR_VERSION: return "the NIC speaks another IPC version";
        case SN_ERR_NIC_STOPPED: return "the NIC has stopped";
        case SN_ERR_TIMEOUT: return "timed out";
        case SN_ERR_CORRUPT: return "the NIC's shared memory is corrupt";
        case SN_ERR_RING_RESET: return "the NIC reset its command ring: retry";
        case SN_ERR_QUEUE_FULL: return "queue full";
        case SN_ERR_INVALID_STATE: return "the connection is closing or the NIC closed";
        case SN_ERR_SYSTEM: return "a system call failed";
        case SN_ERR_NO_MEMORY: return "out of memory";
        case SN_ERR_BAD_VALUE: return "the NIC refused a value";
        case SN_ERR_LIMIT: return "the NIC refused: a limit is reached";
        case SN_ERR_UNKNOWN_OBJECT: return "the NIC refused: no such region or connection of this client";
        case SN_ERR_NOT_CONNECTED: return "the NIC refused: this client is not connected";
        case SN_ERR_FAILED: return "the NIC tried and failed";
        case SN_ERR_MALFORMED: return "the NIC refused a malformed command";
        case SN_ERR_NOT_PERMITTED: return "the NIC does not permit this command";
        case SN_ERR_REFUSED_OTHER: return "the NIC refused with an unknown code";
        default: return "unknown error";
    }
}

const char *sn_wc_status_str(int status)
{
    static const char *const names[] = {
        "SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR",
        "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR",
        "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
        "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR"
    };
    return status >= 0 && status < (int)(sizeof names / sizeof names[0]) ? names[status] : "UNKNOWN";
}
