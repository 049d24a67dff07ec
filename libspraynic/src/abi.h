/*
 * The byte layout of a SprayNIC IPC directory (docs/IPC.md), as offsets: the NIC's Java classes
 * IpcFileDescriptor, IpcMessages and ConnectionRings define the same numbers. Little-endian throughout.
 */
#ifndef SPRAYNIC_ABI_H
#define SPRAYNIC_ABI_H

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the SprayNIC IPC ABI is little-endian and this client reads it in place"
#endif

/* The IPC version this library speaks: equal on both sides or no connection (docs/IPC.md, Versions). */
#define SN_ABI_VERSION 7

/* Agrona ring buffer (one-to-one and many-to-one share it): a power-of-two data area, then a trailer. */
#define SN_RING_TAIL_OFFSET 128
#define SN_RING_HEAD_CACHE_OFFSET 256
#define SN_RING_HEAD_OFFSET 384
#define SN_RING_CORRELATION_OFFSET 512
#define SN_RING_TRAILER_LENGTH 768
#define SN_RECORD_HEADER_LENGTH 8
#define SN_RECORD_ALIGNMENT 8
#define SN_PADDING_TYPE (-1)

/* Agrona broadcast buffer. */
#define SN_BROADCAST_TAIL_INTENT_OFFSET 0
#define SN_BROADCAST_TAIL_OFFSET 8
#define SN_BROADCAST_LATEST_OFFSET 16
#define SN_BROADCAST_TRAILER_LENGTH 128

/* nic.ctl */
#define SN_CTL_FILE "nic.ctl"
/* The NIC's socket (I12): commands that carry memory, with its sealed memfd as the one SCM_RIGHTS descriptor. */
#define SN_SOCKET_FILE "nic.sock"
#define SN_SOCKET_HEADER_LENGTH 8
#define SN_SOCKET_VERSION_OFFSET 4
#define SN_CTL_MAGIC 0x53504E49
#define SN_CTL_MAGIC_OFFSET 0
#define SN_CTL_VERSION_OFFSET 4
#define SN_CTL_PID_OFFSET 8
#define SN_CTL_START_TIME_OFFSET 16
#define SN_CTL_HEARTBEAT_OFFSET 24
#define SN_CTL_CLIENT_TIMEOUT_OFFSET 32
#define SN_CTL_TO_NIC_LENGTH_OFFSET 40
#define SN_CTL_TO_CLIENTS_LENGTH_OFFSET 44
#define SN_CTL_MODE_OFFSET 48
#define SN_CTL_PLANES_OFFSET 52
#define SN_CTL_EPOCH_OFFSET 56
#define SN_CTL_IPV4_OFFSET 64
#define SN_CTL_IPV6_OFFSET 96 /* since version 6: 16 bytes a plane, network order, all 0 on an IPv4 plane */
#define SN_CTL_HEADER_LENGTH 256
#define SN_CTL_TO_NIC_CAPACITY (64 * 1024)
#define SN_CTL_TO_CLIENTS_CAPACITY (64 * 1024)
#define SN_CTL_TO_NIC_LENGTH (SN_CTL_TO_NIC_CAPACITY + SN_RING_TRAILER_LENGTH)
#define SN_CTL_TO_CLIENTS_LENGTH (SN_CTL_TO_CLIENTS_CAPACITY + SN_BROADCAST_TRAILER_LENGTH)
#define SN_CTL_FILE_LENGTH (SN_CTL_HEADER_LENGTH + SN_CTL_TO_NIC_LENGTH + SN_CTL_TO_CLIENTS_LENGTH)
#define SN_NIC_LIVENESS_TIMEOUT_MS 5000
#define SN_MAX_PLANES 8

/* client-<32 hex digits>: one ring, the NIC produces answers, the client consumes them. */
#define SN_ANSWER_CAPACITY (64 * 1024)
#define SN_ANSWER_FILE_LENGTH (SN_ANSWER_CAPACITY + SN_RING_TRAILER_LENGTH)

/* Commands (to-NIC ring record types). */
#define SN_CMD_ADD_CLIENT 1
#define SN_CMD_KEEPALIVE 2
#define SN_CMD_CLOSE_CLIENT 3
#define SN_CMD_REGISTER 4
#define SN_CMD_DEREGISTER 5
#define SN_CMD_CONNECT 6
#define SN_CMD_ACCEPT 7
#define SN_CMD_CREATE_QUEUE_PAIR 8
#define SN_CMD_CONNECT_QUEUE_PAIR 9
#define SN_CMD_CLOSE_CONNECTION 10
#define SN_CMD_HELLO 13
#define SN_CMD_OPEN_MEMORY 14

/* Answers (answer ring and broadcast record types). */
#define SN_ANS_OK 101
#define SN_ANS_ERROR 102
#define SN_ANS_REGION_READY 103
#define SN_ANS_CONNECTION_READY 104
#define SN_ANS_CONNECTION_CLOSED 105

#define SN_MAX_COMMAND_LENGTH 256
#define SN_MAX_STRING_BYTES 400
#define SN_MAX_ANSWER_LENGTH 1024
#define SN_MAX_TIMEOUT_MS 120000

/* Every message: client id, correlation id, token. */
#define SN_MSG_CLIENT_ID 0
#define SN_MSG_CORRELATION_ID 8
#define SN_MSG_TOKEN 16
#define SN_MSG_HEADER_LENGTH 24

#define SN_ADD_CLIENT_PID 24
#define SN_ADD_CLIENT_SIZE 32
#define SN_REGISTER_LENGTH 24
#define SN_REGISTER_ACCESS 32
#define SN_REGISTER_SIZE 36
#define SN_OBJECT_ID 24
#define SN_OBJECT_TIMEOUT_MS 32
#define SN_OBJECT_SIZE 36
#define SN_CONNECT_TIMEOUT_MS 24
#define SN_CONNECT_PLANES 28
#define SN_CONNECT_IPV4 32
#define SN_CONNECT_IPV6 (32 + 4 * SN_MAX_PLANES) /* since version 6: 16 bytes a plane, network order, all 0 for IPv4 */
#define SN_CONNECT_SIZE (SN_CONNECT_IPV6 + 16 * SN_MAX_PLANES)
#define SN_CONNECT_QP_ID 24
#define SN_CONNECT_QP_QPN 32
#define SN_CONNECT_QP_PSN 36
#define SN_CONNECT_QP_IPV4 40
#define SN_CONNECT_QP_MTU 44
#define SN_CONNECT_QP_TIMEOUT_MS 48
#define SN_CONNECT_QP_IPV6 52 /* since version 6: 16 bytes, network order, all 0 for IPv4 */
#define SN_CONNECT_QP_SIZE 68

#define SN_OK_VALUE 24
#define SN_OK_SIZE 32
#define SN_ERROR_COMMAND 24
#define SN_ERROR_CODE 28
#define SN_ERROR_TEXT 32
#define SN_REGION_ID 24
#define SN_REGION_ADDRESS 32
#define SN_REGION_LENGTH 40
#define SN_REGION_LKEY 48
#define SN_REGION_RKEY 52
#define SN_REGION_ACCESS 56
#define SN_REGION_FILE 60
#define SN_READY_ID 24
#define SN_READY_KIND 32
#define SN_READY_LOCAL_ID 36
#define SN_READY_STREAMS 40
#define SN_READY_PLANE 44
#define SN_READY_PSN 48
#define SN_READY_IPV4 52
#define SN_READY_MTU 56
#define SN_READY_IPV6 60 /* since version 6: 16 bytes, network order, all 0 for IPv4 and spray */
#define SN_READY_FILE 76
#define SN_CLOSED_ID 24
#define SN_CLOSED_SENDS 32
#define SN_CLOSED_RECEIVES 40
#define SN_CLOSED_WAITING 48
#define SN_CLOSED_IDLE 52
#define SN_CLOSED_SIZE 56

/* conn-<client>-<id>: a header, the request ring, the send and the receive completion rings. */
#define SN_CONN_MAGIC 0x53504352
#define SN_CONN_MAGIC_OFFSET 0
#define SN_CONN_VERSION_OFFSET 4
#define SN_CONN_ID_OFFSET 8
#define SN_CONN_REQUEST_LENGTH_OFFSET 16
#define SN_CONN_COMPLETION_LENGTH_OFFSET 20
#define SN_CONN_HEADER_LENGTH 64
#define SN_CONN_REQUEST_LENGTH (64 * 1024 + SN_RING_TRAILER_LENGTH)
#define SN_CONN_COMPLETION_LENGTH (128 * 1024 + SN_RING_TRAILER_LENGTH)
#define SN_CONN_FILE_LENGTH (SN_CONN_HEADER_LENGTH + SN_CONN_REQUEST_LENGTH + 2 * SN_CONN_COMPLETION_LENGTH)

#define SN_REC_SEND_REQUEST 1
#define SN_REC_RECEIVE_REQUEST 2
#define SN_REC_COMPLETION 3

#define SN_WR_ID 0
#define SN_WR_LOCAL_ADDRESS 8
#define SN_WR_REMOTE_ADDRESS 16
#define SN_WR_LKEY 24
#define SN_WR_LENGTH 28
#define SN_WR_RKEY 32
#define SN_WR_IMMEDIATE 36
#define SN_WR_STREAM 40
#define SN_WR_OPCODE 44
#define SN_WR_FLAGS 45
#define SN_WR_SIZE 48

#define SN_WC_ID 0
#define SN_WC_BYTE_LENGTH 8
#define SN_WC_IMMEDIATE 12
#define SN_WC_QP_NUMBER 16
#define SN_WC_STATUS 20
#define SN_WC_OPCODE 21
#define SN_WC_HAS_IMMEDIATE 22
#define SN_WC_SIZE 24

#endif
