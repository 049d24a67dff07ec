package io.spraynic.libspraynic;

import io.spraynic.datapath.nic.ipc.ConnectionRings;
import io.spraynic.datapath.nic.ipc.IpcConductor;
import io.spraynic.datapath.nic.ipc.IpcFileDescriptor;
import io.spraynic.datapath.nic.ipc.IpcAnswers;
import io.spraynic.datapath.nic.ipc.IpcMessages;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.concurrent.broadcast.BroadcastBufferDescriptor;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every constant of the IPC ABI as libspraynic compiles it ({@code abi_dump}) equals the NIC's Java definition of
 * it: a layout changed on one side only fails here, before any byte is misread (docs/IPC.md, I9).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AbiConstantsTest
{
    @Test
    void shouldCompileEveryAbiConstantAsTheNicDefinesIt() throws Exception
    {
        final Map<String, Long> java = expected();
        final Process dump = new ProcessBuilder(Path.of(System.getProperty("user.dir"), "target", "native", "abi_dump")
            .toString()).redirectErrorStream(true).start();
        final String out = new String(dump.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(dump.waitFor(30, TimeUnit.SECONDS), out);
        assertEquals(0, dump.exitValue(), out);
        final Map<String, Long> c = new HashMap<>();
        out.lines().map(line -> line.split(" ")).forEach(f -> c.put(f[0], Long.parseLong(f[1])));
        final List<String> problems = new ArrayList<>();
        java.forEach((name, value) ->
        {
            if (!value.equals(c.get(name)))
            {
                problems.add(name + ": the NIC says " + value + ", libspraynic " + c.get(name));
            }
        });
        c.keySet().stream().filter(name -> !java.containsKey(name)).forEach(name -> problems.add(name + " is not checked"));
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    private static Map<String, Long> expected()
    {
        final Map<String, Long> m = new LinkedHashMap<>();
        m.put("SN_ABI_VERSION", (long)IpcFileDescriptor.VERSION);
        m.put("SN_IPC_VERSION", (long)IpcFileDescriptor.VERSION);
        m.put("SN_RING_TAIL_OFFSET", (long)RingBufferDescriptor.TAIL_POSITION_OFFSET);
        m.put("SN_RING_HEAD_CACHE_OFFSET", (long)RingBufferDescriptor.HEAD_CACHE_POSITION_OFFSET);
        m.put("SN_RING_HEAD_OFFSET", (long)RingBufferDescriptor.HEAD_POSITION_OFFSET);
        m.put("SN_RING_CORRELATION_OFFSET", (long)RingBufferDescriptor.CORRELATION_COUNTER_OFFSET);
        m.put("SN_RING_TRAILER_LENGTH", (long)RingBufferDescriptor.TRAILER_LENGTH);
        m.put("SN_RECORD_HEADER_LENGTH", (long)RecordDescriptor.HEADER_LENGTH);
        m.put("SN_RECORD_ALIGNMENT", (long)RecordDescriptor.ALIGNMENT);
        m.put("SN_PADDING_TYPE", (long)RingBuffer.PADDING_MSG_TYPE_ID);
        m.put("SN_BROADCAST_TAIL_INTENT_OFFSET", (long)BroadcastBufferDescriptor.TAIL_INTENT_COUNTER_OFFSET);
        m.put("SN_BROADCAST_TAIL_OFFSET", (long)BroadcastBufferDescriptor.TAIL_COUNTER_OFFSET);
        m.put("SN_BROADCAST_LATEST_OFFSET", (long)BroadcastBufferDescriptor.LATEST_COUNTER_OFFSET);
        m.put("SN_BROADCAST_TRAILER_LENGTH", (long)BroadcastBufferDescriptor.TRAILER_LENGTH);

        m.put("SN_CTL_MAGIC", (long)IpcFileDescriptor.MAGIC);
        m.put("SN_CTL_MAGIC_OFFSET", (long)IpcFileDescriptor.MAGIC_OFFSET);
        m.put("SN_CTL_VERSION_OFFSET", (long)IpcFileDescriptor.VERSION_OFFSET);
        m.put("SN_CTL_PID_OFFSET", (long)IpcFileDescriptor.PID_OFFSET);
        m.put("SN_CTL_START_TIME_OFFSET", (long)IpcFileDescriptor.START_TIME_OFFSET);
        m.put("SN_CTL_HEARTBEAT_OFFSET", (long)IpcFileDescriptor.HEARTBEAT_OFFSET);
        m.put("SN_CTL_CLIENT_TIMEOUT_OFFSET", (long)IpcFileDescriptor.CLIENT_TIMEOUT_OFFSET);
        m.put("SN_CTL_TO_NIC_LENGTH_OFFSET", (long)IpcFileDescriptor.TO_NIC_LENGTH_OFFSET);
        m.put("SN_CTL_TO_CLIENTS_LENGTH_OFFSET", (long)IpcFileDescriptor.TO_CLIENTS_LENGTH_OFFSET);
        m.put("SN_CTL_MODE_OFFSET", (long)IpcFileDescriptor.MODE_OFFSET);
        m.put("SN_CTL_PLANES_OFFSET", (long)IpcFileDescriptor.PLANES_OFFSET);
        m.put("SN_CTL_EPOCH_OFFSET", (long)IpcFileDescriptor.COMMAND_RING_EPOCH_OFFSET);
        m.put("SN_CTL_IPV4_OFFSET", (long)IpcFileDescriptor.LOCAL_IPV4_OFFSET);
        m.put("SN_CTL_IPV6_OFFSET", (long)IpcFileDescriptor.LOCAL_IPV6_OFFSET);
        m.put("SN_CTL_HEADER_LENGTH", (long)IpcFileDescriptor.HEADER_LENGTH);
        m.put("SN_CTL_TO_NIC_LENGTH", (long)IpcFileDescriptor.toNicLength());
        m.put("SN_CTL_TO_CLIENTS_LENGTH", (long)IpcFileDescriptor.toClientsLength());
        m.put("SN_CTL_FILE_LENGTH", (long)IpcFileDescriptor.fileLength());
        m.put("SN_NIC_LIVENESS_TIMEOUT_MS", IpcFileDescriptor.NIC_LIVENESS_TIMEOUT_MS);
        m.put("SN_MAX_PLANES", (long)IpcMessages.MAX_PLANES);
        m.put("SN_ANSWER_FILE_LENGTH", (long)IpcFileDescriptor.answerFileLength());

        m.put("SN_CMD_ADD_CLIENT", (long)IpcMessages.ADD_CLIENT);
        m.put("SN_CMD_HELLO", (long)IpcMessages.HELLO);
        m.put("SN_CMD_OPEN_MEMORY", (long)IpcMessages.OPEN_MEMORY);
        m.put("SN_SOCKET_HEADER_LENGTH", (long)IpcMessages.SOCKET_HEADER_LENGTH);
        m.put("SN_SOCKET_VERSION_OFFSET", (long)IpcMessages.SOCKET_VERSION_OFFSET);
        m.put("SN_CMD_KEEPALIVE", (long)IpcMessages.KEEPALIVE);
        m.put("SN_CMD_CLOSE_CLIENT", (long)IpcMessages.CLOSE_CLIENT);
        m.put("SN_CMD_REGISTER", (long)IpcMessages.REGISTER);
        m.put("SN_CMD_DEREGISTER", (long)IpcMessages.DEREGISTER);
        m.put("SN_CMD_CONNECT", (long)IpcMessages.CONNECT);
        m.put("SN_CMD_ACCEPT", (long)IpcMessages.ACCEPT);
        m.put("SN_CMD_CREATE_QUEUE_PAIR", (long)IpcMessages.CREATE_QUEUE_PAIR);
        m.put("SN_CMD_CONNECT_QUEUE_PAIR", (long)IpcMessages.CONNECT_QUEUE_PAIR);
        m.put("SN_CMD_CLOSE_CONNECTION", (long)IpcMessages.CLOSE_CONNECTION);
        m.put("SN_ANS_OK", (long)IpcMessages.OK);
        m.put("SN_ANS_ERROR", (long)IpcMessages.ERROR);
        m.put("SN_ANS_REGION_READY", (long)IpcMessages.REGION_READY);
        m.put("SN_ANS_CONNECTION_READY", (long)IpcMessages.CONNECTION_READY);
        m.put("SN_ANS_CONNECTION_CLOSED", (long)IpcMessages.CONNECTION_CLOSED);
        m.put("SN_MAX_COMMAND_LENGTH", (long)IpcMessages.MAX_COMMAND_LENGTH);
        m.put("SN_MAX_STRING_BYTES", (long)IpcMessages.MAX_STRING_BYTES);
        m.put("SN_MAX_TIMEOUT_MS", (long)IpcConductor.MAX_TIMEOUT_MS);

        m.put("SN_MSG_CLIENT_ID", (long)IpcMessages.Header.CLIENT_ID_OFFSET);
        m.put("SN_MSG_CORRELATION_ID", (long)IpcMessages.Header.CORRELATION_ID_OFFSET);
        m.put("SN_MSG_TOKEN", (long)IpcMessages.Header.TOKEN_OFFSET);
        m.put("SN_MSG_HEADER_LENGTH", (long)IpcMessages.Header.LENGTH);
        m.put("SN_ADD_CLIENT_PID", (long)IpcMessages.AddClient.PID_OFFSET);
        m.put("SN_ADD_CLIENT_SIZE", (long)IpcMessages.AddClient.LENGTH);
        m.put("SN_REGISTER_LENGTH", (long)IpcMessages.Register.LENGTH_OFFSET);
        m.put("SN_REGISTER_ACCESS", (long)IpcMessages.Register.ACCESS_OFFSET);
        m.put("SN_REGISTER_SIZE", (long)IpcMessages.Register.LENGTH);
        m.put("SN_OBJECT_ID", (long)IpcMessages.ObjectCommand.OBJECT_ID_OFFSET);
        m.put("SN_OBJECT_TIMEOUT_MS", (long)IpcMessages.ObjectCommand.TIMEOUT_MS_OFFSET);
        m.put("SN_OBJECT_SIZE", (long)IpcMessages.ObjectCommand.LENGTH);
        m.put("SN_CONNECT_TIMEOUT_MS", (long)IpcMessages.Connect.TIMEOUT_MS_OFFSET);
        m.put("SN_CONNECT_PLANES", (long)IpcMessages.Connect.PLANES_OFFSET);
        m.put("SN_CONNECT_IPV4", (long)IpcMessages.Connect.IPV4_OFFSET);
        m.put("SN_CONNECT_IPV6", (long)IpcMessages.Connect.IPV6_OFFSET);
        m.put("SN_CONNECT_SIZE", (long)IpcMessages.Connect.LENGTH);
        m.put("SN_CONNECT_QP_ID", (long)IpcMessages.ConnectQueuePair.CONNECTION_ID_OFFSET);
        m.put("SN_CONNECT_QP_QPN", (long)IpcMessages.ConnectQueuePair.QPN_OFFSET);
        m.put("SN_CONNECT_QP_PSN", (long)IpcMessages.ConnectQueuePair.PSN_OFFSET);
        m.put("SN_CONNECT_QP_IPV4", (long)IpcMessages.ConnectQueuePair.IPV4_OFFSET);
        m.put("SN_CONNECT_QP_MTU", (long)IpcMessages.ConnectQueuePair.MTU_OFFSET);
        m.put("SN_CONNECT_QP_TIMEOUT_MS", (long)IpcMessages.ConnectQueuePair.TIMEOUT_MS_OFFSET);
        m.put("SN_CONNECT_QP_IPV6", (long)IpcMessages.ConnectQueuePair.IPV6_OFFSET);
        m.put("SN_CONNECT_QP_SIZE", (long)IpcMessages.ConnectQueuePair.LENGTH);
        m.put("SN_OK_VALUE", (long)IpcAnswers.Ok.VALUE_OFFSET);
        m.put("SN_OK_SIZE", (long)IpcAnswers.Ok.LENGTH);
        m.put("SN_ERROR_COMMAND", (long)IpcAnswers.Error.COMMAND_TYPE_OFFSET);
        m.put("SN_ERROR_CODE", (long)IpcAnswers.Error.CODE_OFFSET);
        m.put("SN_ERROR_TEXT", (long)IpcAnswers.Error.MESSAGE_OFFSET);
        m.put("SN_REGION_ID", (long)IpcAnswers.RegionReady.REGION_ID_OFFSET);
        m.put("SN_REGION_ADDRESS", (long)IpcAnswers.RegionReady.ADDRESS_OFFSET);
        m.put("SN_REGION_LENGTH", (long)IpcAnswers.RegionReady.LENGTH_OFFSET);
        m.put("SN_REGION_LKEY", (long)IpcAnswers.RegionReady.LKEY_OFFSET);
        m.put("SN_REGION_RKEY", (long)IpcAnswers.RegionReady.RKEY_OFFSET);
        m.put("SN_REGION_ACCESS", (long)IpcAnswers.RegionReady.ACCESS_OFFSET);
        m.put("SN_REGION_FILE", (long)IpcAnswers.RegionReady.FILE_OFFSET);
        m.put("SN_READY_ID", (long)IpcAnswers.ConnectionReady.CONNECTION_ID_OFFSET);
        m.put("SN_READY_KIND", (long)IpcAnswers.ConnectionReady.KIND_OFFSET);
        m.put("SN_READY_LOCAL_ID", (long)IpcAnswers.ConnectionReady.LOCAL_ID_OFFSET);
        m.put("SN_READY_STREAMS", (long)IpcAnswers.ConnectionReady.STREAMS_OFFSET);
        m.put("SN_READY_PLANE", (long)IpcAnswers.ConnectionReady.PLANE_OFFSET);
        m.put("SN_READY_PSN", (long)IpcAnswers.ConnectionReady.PSN_OFFSET);
        m.put("SN_READY_IPV4", (long)IpcAnswers.ConnectionReady.IPV4_OFFSET);
        m.put("SN_READY_MTU", (long)IpcAnswers.ConnectionReady.MTU_OFFSET);
        m.put("SN_READY_IPV6", (long)IpcAnswers.ConnectionReady.IPV6_OFFSET);
        m.put("SN_READY_FILE", (long)IpcAnswers.ConnectionReady.FILE_OFFSET);
        m.put("SN_CLOSED_ID", (long)IpcAnswers.ConnectionClosed.CONNECTION_ID_OFFSET);
        m.put("SN_CLOSED_SENDS", (long)IpcAnswers.ConnectionClosed.POSTED_SENDS_OFFSET);
        m.put("SN_CLOSED_RECEIVES", (long)IpcAnswers.ConnectionClosed.POSTED_RECEIVES_OFFSET);
        m.put("SN_CLOSED_WAITING", (long)IpcAnswers.ConnectionClosed.WAITING_OFFSET);
        m.put("SN_CLOSED_IDLE", (long)IpcAnswers.ConnectionClosed.IDLE_OFFSET);
        m.put("SN_CLOSED_SIZE", (long)IpcAnswers.ConnectionClosed.LENGTH);

        m.put("SN_CONN_MAGIC", (long)ConnectionRings.MAGIC);
        m.put("SN_CONN_MAGIC_OFFSET", (long)ConnectionRings.MAGIC_OFFSET);
        m.put("SN_CONN_VERSION_OFFSET", (long)ConnectionRings.VERSION_OFFSET);
        m.put("SN_CONN_ID_OFFSET", (long)ConnectionRings.CONNECTION_ID_OFFSET);
        m.put("SN_CONN_REQUEST_LENGTH_OFFSET", (long)ConnectionRings.REQUEST_RING_LENGTH_OFFSET);
        m.put("SN_CONN_COMPLETION_LENGTH_OFFSET", (long)ConnectionRings.COMPLETION_RING_LENGTH_OFFSET);
        m.put("SN_CONN_HEADER_LENGTH", (long)ConnectionRings.HEADER_LENGTH);
        m.put("SN_CONN_REQUEST_LENGTH", (long)ConnectionRings.REQUEST_RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH);
        m.put("SN_CONN_COMPLETION_LENGTH",
            (long)ConnectionRings.COMPLETION_RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH);
        m.put("SN_CONN_FILE_LENGTH", (long)ConnectionRings.fileLength());
        m.put("SN_REC_SEND_REQUEST", (long)ConnectionRings.SEND_REQUEST);
        m.put("SN_REC_RECEIVE_REQUEST", (long)ConnectionRings.RECEIVE_REQUEST);
        m.put("SN_REC_COMPLETION", (long)ConnectionRings.COMPLETION);
        m.put("SN_WR_ID", (long)ConnectionRings.WR_ID_OFFSET);
        m.put("SN_WR_LOCAL_ADDRESS", (long)ConnectionRings.WR_LOCAL_ADDRESS_OFFSET);
        m.put("SN_WR_REMOTE_ADDRESS", (long)ConnectionRings.WR_REMOTE_ADDRESS_OFFSET);
        m.put("SN_WR_LKEY", (long)ConnectionRings.WR_LKEY_OFFSET);
        m.put("SN_WR_LENGTH", (long)ConnectionRings.WR_LENGTH_OFFSET);
        m.put("SN_WR_RKEY", (long)ConnectionRings.WR_RKEY_OFFSET);
        m.put("SN_WR_IMMEDIATE", (long)ConnectionRings.WR_IMMEDIATE_OFFSET);
        m.put("SN_WR_STREAM", (long)ConnectionRings.WR_STREAM_OFFSET);
        m.put("SN_WR_OPCODE", (long)ConnectionRings.WR_OPCODE_OFFSET);
        m.put("SN_WR_FLAGS", (long)ConnectionRings.WR_FLAGS_OFFSET);
        m.put("SN_WR_SIZE", (long)ConnectionRings.WR_LENGTH);
        m.put("SN_WC_ID", (long)ConnectionRings.WC_ID_OFFSET);
        m.put("SN_WC_BYTE_LENGTH", (long)ConnectionRings.WC_BYTE_LENGTH_OFFSET);
        m.put("SN_WC_IMMEDIATE", (long)ConnectionRings.WC_IMMEDIATE_OFFSET);
        m.put("SN_WC_QP_NUMBER", (long)ConnectionRings.WC_QP_NUMBER_OFFSET);
        m.put("SN_WC_STATUS", (long)ConnectionRings.WC_STATUS_OFFSET);
        m.put("SN_WC_OPCODE", (long)ConnectionRings.WC_OPCODE_OFFSET);
        m.put("SN_WC_HAS_IMMEDIATE", (long)ConnectionRings.WC_HAS_IMMEDIATE_OFFSET);
        m.put("SN_WC_SIZE", (long)ConnectionRings.WC_LENGTH);
        m.put("SN_SEND_SIGNALED", (long)ConnectionRings.FLAG_SIGNALED);
        m.put("SN_SEND_SOLICITED", (long)ConnectionRings.FLAG_SOLICITED);

        m.put("SN_ACCESS_LOCAL_WRITE", (long)AccessFlags.LOCAL_WRITE);
        m.put("SN_ACCESS_REMOTE_WRITE", (long)AccessFlags.REMOTE_WRITE);
        m.put("SN_ACCESS_REMOTE_READ", (long)AccessFlags.REMOTE_READ);
        m.put("SN_ACCESS_REMOTE_ATOMIC", (long)AccessFlags.REMOTE_ATOMIC);
        m.put("SN_WR_RDMA_WRITE", (long)WorkRequestOpcode.RDMA_WRITE.code());
        m.put("SN_WR_RDMA_WRITE_WITH_IMM", (long)WorkRequestOpcode.RDMA_WRITE_WITH_IMM.code());
        m.put("SN_WR_SEND", (long)WorkRequestOpcode.SEND.code());
        m.put("SN_WR_SEND_WITH_IMM", (long)WorkRequestOpcode.SEND_WITH_IMM.code());
        m.put("SN_WR_RDMA_READ", (long)WorkRequestOpcode.RDMA_READ.code());
        // the completion ring carries ordinals (ConnectionRings.offerCompletion), not ibverbs' codes
        m.put("SN_WC_SEND", (long)WorkCompletionOpcode.SEND.ordinal());
        m.put("SN_WC_RDMA_WRITE", (long)WorkCompletionOpcode.RDMA_WRITE.ordinal());
        m.put("SN_WC_RDMA_READ", (long)WorkCompletionOpcode.RDMA_READ.ordinal());
        m.put("SN_WC_COMP_SWAP", (long)WorkCompletionOpcode.COMP_SWAP.ordinal());
        m.put("SN_WC_FETCH_ADD", (long)WorkCompletionOpcode.FETCH_ADD.ordinal());
        m.put("SN_WC_RECV", (long)WorkCompletionOpcode.RECV.ordinal());
        m.put("SN_WC_RECV_RDMA_WITH_IMM", (long)WorkCompletionOpcode.RECV_RDMA_WITH_IMM.ordinal());
        m.put("SN_WC_SUCCESS", (long)WorkCompletionStatus.SUCCESS.ordinal());
        m.put("SN_WC_LOC_PROT_ERR", (long)WorkCompletionStatus.LOC_PROT_ERR.ordinal());
        m.put("SN_WC_WR_FLUSH_ERR", (long)WorkCompletionStatus.WR_FLUSH_ERR.ordinal());
        m.put("SN_WC_REM_ACCESS_ERR", (long)WorkCompletionStatus.REM_ACCESS_ERR.ordinal());
        m.put("SN_WC_RETRY_EXC_ERR", (long)WorkCompletionStatus.RETRY_EXC_ERR.ordinal());
        // the last status: a client reads any status above it as it
        m.put("SN_WC_GENERAL_ERR", (long)WorkCompletionStatus.values().length - 1);
        m.put("SN_TRANSPORT_SPRAY", (long)io.spraynic.datapath.nic.NicConnection.Kind.SPRAY.ordinal());
        m.put("SN_TRANSPORT_ROCEV2", (long)io.spraynic.datapath.nic.NicConnection.Kind.ROCEV2.ordinal());
        m.put("SN_ERR_BAD_VALUE", -20L - IpcMessages.ERR_BAD_VALUE);
        m.put("SN_ERR_LIMIT", -20L - IpcMessages.ERR_LIMIT);
        m.put("SN_ERR_UNKNOWN_OBJECT", -20L - IpcMessages.ERR_UNKNOWN_OBJECT);
        m.put("SN_ERR_NOT_CONNECTED", -20L - IpcMessages.ERR_NOT_CONNECTED);
        m.put("SN_ERR_FAILED", -20L - IpcMessages.ERR_FAILED);
        m.put("SN_ERR_MALFORMED", -20L - IpcMessages.ERR_MALFORMED);
        m.put("SN_ERR_NOT_PERMITTED", -20L - IpcMessages.ERR_NOT_PERMITTED);
        return m;
    }
}
