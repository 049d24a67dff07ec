package io.spraynic.datapath.nic.ipc;

import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;

/**
 * The messages clients and the NIC exchange: commands on the control file's to-NIC ring ({@link IpcFileDescriptor}),
 * answers ({@link IpcAnswers}) in each client's own answer ring (a file only that client's ADD_CLIENT named, mode 0600), and refusals
 * that cannot reach an answer ring (an unknown client, a bad answer file) on the control file's broadcast, which
 * never carries a key, an address or a token. Every message starts with the client id, the correlation id of the
 * command it belongs to, and the client's token: the NIC draws the token from a {@code SecureRandom} when the client
 * connects, answers it in the client's answer ring, and refuses every later command that does not carry it. Each
 * message is a flyweight over a buffer: named offsets, little-endian (both ends are on one host), fixed length
 * except a trailing UTF-8 string where there is one.
 */
public final class IpcMessages
{
    /** Byte order of every field. */
    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    /** Command: a client announces itself and names its answer file; the NIC answers its id and token there. */
    public static final int ADD_CLIENT = 1;
    /** Command: the client is alive; no answer. */
    public static final int KEEPALIVE = 2;
    /** Command: the client leaves; everything it holds is released. */
    public static final int CLOSE_CLIENT = 3;
    /** Command: register a new shared-memory region. */
    public static final int REGISTER = 4;
    /** Command: deregister a region and remove its file. */
    public static final int DEREGISTER = 5;
    /** Command: open a spray connection to a peer NIC. */
    public static final int CONNECT = 6;
    /** Command: take the next spray connection a peer opened. */
    public static final int ACCEPT = 7;
    /** Command: create a RoCEv2 queue pair. */
    public static final int CREATE_QUEUE_PAIR = 8;
    /** Command: connect a RoCEv2 queue pair to its peer's endpoint. */
    public static final int CONNECT_QUEUE_PAIR = 9;
    /** Command: close a connection (drain, then forget). */
    public static final int CLOSE_CONNECTION = 10;
    /** Command: start a live capture of the NIC's frames into shared memory the NIC makes (one at a time). */
    public static final int START_CAPTURE = 11;
    /** Command: stop the client's live capture; answered OK once no worker writes into it any more. */
    public static final int STOP_CAPTURE = 12;
    /** Command type (socket only): asks for the control memory; answered on the socket with it. */
    public static final int HELLO = 13;
    /** Command type (socket only): asks for a connection's rings or a capture's memory; answered on the socket. */
    public static final int OPEN_MEMORY = 14;

    /** Response: done, with one value. */
    public static final int OK = 101;
    /** Response: refused, with a reason. */
    public static final int ERROR = 102;
    /** Response: a region is registered. */
    public static final int REGION_READY = 103;
    /** Response: a connection (or queue pair) is ready. */
    public static final int CONNECTION_READY = 104;
    /** Response: a connection is closed. */
    public static final int CONNECTION_CLOSED = 105;
    /** Response: a live capture runs; its memory is at the path given. */
    public static final int CAPTURE_READY = 106;

    /** Error code: a value the command carries is not allowed (the message says which and what is). */
    public static final int ERR_BAD_VALUE = 1;
    /** Error code: a limit of the NIC (clients, regions or connections per client, control actions) is reached. */
    public static final int ERR_LIMIT = 2;
    /** Error code: the command names a region or connection this client does not hold. */
    public static final int ERR_UNKNOWN_OBJECT = 3;
    /** Error code: the client is not (or no longer) connected to this NIC. */
    public static final int ERR_NOT_CONNECTED = 4;
    /** Error code: the NIC tried and failed (a handshake timed out, memory could not be mapped, ...). */
    public static final int ERR_FAILED = 5;
    /** Error code: the command is malformed (unknown type, too short, a bad answer file). */
    public static final int ERR_MALFORMED = 6;
    /** Error code: the NIC does not allow this command (e.g. it was started without live capture). */
    public static final int ERR_NOT_PERMITTED = 7;

    /** Longest command a client writes, in bytes: a longer record on the to-NIC ring is corruption. */
    public static final int MAX_COMMAND_LENGTH = 256;
    /** Bytes before the command or answer in a message of the NIC's socket: {@code type} (i32), {@code version} (i32). */
    public static final int SOCKET_HEADER_LENGTH = 8;
    /** Where a socket message holds its version. */
    public static final int SOCKET_VERSION_OFFSET = 4;
    /** Most planes a CONNECT names. */
    public static final int MAX_PLANES = 8;
    /** Longest string (error text, file name) a response carries, in bytes. */
    public static final int MAX_STRING_BYTES = 400;

    private IpcMessages()
    {
    }

    /** @return e.g. "REGISTER" for a type id. */
    public static String name(final int type)
    {
        return switch (type)
        {
            case ADD_CLIENT -> "ADD_CLIENT";
            case KEEPALIVE -> "KEEPALIVE";
            case CLOSE_CLIENT -> "CLOSE_CLIENT";
            case REGISTER -> "REGISTER";
            case DEREGISTER -> "DEREGISTER";
            case CONNECT -> "CONNECT";
            case ACCEPT -> "ACCEPT";
            case CREATE_QUEUE_PAIR -> "CREATE_QUEUE_PAIR";
            case CONNECT_QUEUE_PAIR -> "CONNECT_QUEUE_PAIR";
            case CLOSE_CONNECTION -> "CLOSE_CONNECTION";
            case START_CAPTURE -> "START_CAPTURE";
            case STOP_CAPTURE -> "STOP_CAPTURE";
            case HELLO -> "HELLO";
            case OPEN_MEMORY -> "OPEN_MEMORY";
            case OK -> "OK";
            case ERROR -> "ERROR";
            case REGION_READY -> "REGION_READY";
            case CONNECTION_READY -> "CONNECTION_READY";
            case CONNECTION_CLOSED -> "CONNECTION_CLOSED";
            case CAPTURE_READY -> "CAPTURE_READY";
            default -> "UNKNOWN_" + type;
        };
    }

    /** @return e.g. "LIMIT" for an error code. */
    public static String errorName(final int code)
    {
        return switch (code)
        {
            case ERR_BAD_VALUE -> "BAD_VALUE";
            case ERR_LIMIT -> "LIMIT";
            case ERR_UNKNOWN_OBJECT -> "UNKNOWN_OBJECT";
            case ERR_NOT_CONNECTED -> "NOT_CONNECTED";
            case ERR_FAILED -> "FAILED";
            case ERR_MALFORMED -> "MALFORMED";
            case ERR_NOT_PERMITTED -> "NOT_PERMITTED";
            default -> "UNKNOWN_" + code;
        };
    }

    /** What every message starts with. */
    public static class Header
    {
        /** The client's id (long), given by the NIC. */
        public static final int CLIENT_ID_OFFSET = 0;
        /** The command's correlation id (long); a response repeats it. */
        public static final int CORRELATION_ID_OFFSET = 8;
        /** The client's token (long): every command carries it; only ADD_CLIENT's OK answers it, else 0. */
        public static final int TOKEN_OFFSET = 16;
        /** Bytes of the header. */
        public static final int LENGTH = 24;

        MutableDirectBuffer buffer;
        int offset;

        /** @return this, over {@code buffer} at {@code offset}. */
        public Header wrap(final MutableDirectBuffer buffer, final int offset)
        {
            this.buffer = buffer;
            this.offset = offset;
            return this;
        }

        public long clientId()
        {
            return buffer.getLong(offset + CLIENT_ID_OFFSET, ORDER);
        }

        public long correlationId()
        {
            return buffer.getLong(offset + CORRELATION_ID_OFFSET, ORDER);
        }

        public long token()
        {
            return buffer.getLong(offset + TOKEN_OFFSET, ORDER);
        }

        /** Writes both ids and a token of 0. */
        public void ids(final long clientId, final long correlationId)
        {
            ids(clientId, correlationId, 0);
        }

        /** Writes both ids and the token. */
        public void ids(final long clientId, final long correlationId, final long token)
        {
            buffer.putLong(offset + CLIENT_ID_OFFSET, clientId, ORDER);
            buffer.putLong(offset + CORRELATION_ID_OFFSET, correlationId, ORDER);
            buffer.putLong(offset + TOKEN_OFFSET, token, ORDER);
        }

        long getLong(final int field)
        {
            return buffer.getLong(offset + field, ORDER);
        }

        int getInt(final int field)
        {
            return buffer.getInt(offset + field, ORDER);
        }

        void putLong(final int field, final long value)
        {
            buffer.putLong(offset + field, value, ORDER);
        }

        void putInt(final int field, final int value)
        {
            buffer.putInt(offset + field, value, ORDER);
        }

        /** @return the first (high) 8 bytes of the IPv6 address at {@code field}, 16 bytes in network order (I1.2a). */
        long getIpv6High(final int field)
        {
            return buffer.getLong(offset + field, java.nio.ByteOrder.BIG_ENDIAN);
        }

        /** @return the last (low) 8 bytes of the IPv6 address at {@code field}. */
        long getIpv6Low(final int field)
        {
            return buffer.getLong(offset + field + 8, java.nio.ByteOrder.BIG_ENDIAN);
        }

        /** Writes an IPv6 address as its 16 bytes in network order, as it is written and as a GID is (I1.2a). */
        void putIpv6(final int field, final long high, final long low)
        {
            buffer.putLong(offset + field, high, java.nio.ByteOrder.BIG_ENDIAN);
            buffer.putLong(offset + field + 8, low, java.nio.ByteOrder.BIG_ENDIAN);
        }

        String getString(final int field)
        {
            return buffer.getStringUtf8(offset + field, ORDER);
        }

        /**
         * @return the string at {@code field} of a message of {@code messageLength} bytes written by an untrusted
         * process, or null when its length prefix is negative, over {@code maxBytes} or past the message's end.
         */
        String getBoundedString(final int field, final int messageLength, final int maxBytes)
        {
            if (field + 4 > messageLength)
            {
                return null;
            }
            final int bytes = buffer.getInt(offset + field, ORDER);
            if (bytes < 0 || bytes > maxBytes || bytes > messageLength - field - 4)
            {
                return null;
            }
            return buffer.getStringWithoutLengthUtf8(offset + field + 4, bytes);
        }

        /** @return bytes written: the length prefix and the UTF-8 text, cut to {@link #MAX_STRING_BYTES} (control path). */
        int putString(final int field, final String value)
        {
            String text = value;
            while (text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_STRING_BYTES)
            {
                text = text.substring(0, Math.min(text.length() - 1, MAX_STRING_BYTES));
            }
            return buffer.putStringUtf8(offset + field, text, ORDER, MAX_STRING_BYTES);
        }
    }

    /** ADD_CLIENT (on the socket since version 5): the client's process id (ids and token 0). */
    public static final class AddClient extends Header
    {
        public static final int PID_OFFSET = Header.LENGTH;
        public static final int LENGTH = PID_OFFSET + 8;

        public AddClient wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long pid()
        {
            return getLong(PID_OFFSET);
        }

        public AddClient pid(final long pid)
        {
            putLong(PID_OFFSET, pid);
            return this;
        }
    }

    /** REGISTER: the bytes and access flags of a new region. */
    public static final class Register extends Header
    {
        public static final int LENGTH_OFFSET = Header.LENGTH;
        public static final int ACCESS_OFFSET = LENGTH_OFFSET + 8;
        public static final int LENGTH = ACCESS_OFFSET + 4;

        public Register wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long regionLength()
        {
            return getLong(LENGTH_OFFSET);
        }

        public int access()
        {
            return getInt(ACCESS_OFFSET);
        }

        public Register region(final long length, final int access)
        {
            putLong(LENGTH_OFFSET, length);
            putInt(ACCESS_OFFSET, access);
            return this;
        }
    }

    /** DEREGISTER, CLOSE_CONNECTION: the object named and (CLOSE_CONNECTION) the drain time. */
    public static final class ObjectCommand extends Header
    {
        public static final int OBJECT_ID_OFFSET = Header.LENGTH;
        public static final int TIMEOUT_MS_OFFSET = OBJECT_ID_OFFSET + 8;
        public static final int LENGTH = TIMEOUT_MS_OFFSET + 4;

        public ObjectCommand wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long objectId()
        {
            return getLong(OBJECT_ID_OFFSET);
        }

        public int timeoutMs()
        {
            return getInt(TIMEOUT_MS_OFFSET);
        }

        public ObjectCommand object(final long id, final int timeoutMs)
        {
            putLong(OBJECT_ID_OFFSET, id);
            putInt(TIMEOUT_MS_OFFSET, timeoutMs);
            return this;
        }
    }

    /** CONNECT, ACCEPT, CREATE_QUEUE_PAIR: the peer's address per plane (no MAC: the NIC resolves it), a timeout, a plane. */
    public static final class Connect extends Header
    {
        public static final int TIMEOUT_MS_OFFSET = Header.LENGTH;
        public static final int PLANES_OFFSET = TIMEOUT_MS_OFFSET + 4;
        public static final int IPV4_OFFSET = PLANES_OFFSET + 4;
        /**
         * Since version 6: CONNECT's peer IPv6 address on plane {@code p} at {@code IPV6_OFFSET + 16p}, 16 bytes in
         * network order (I1.2a); all 0 on a plane whose peer {@code ipv4} names.
         */
        public static final int IPV6_OFFSET = IPV4_OFFSET + 4 * MAX_PLANES;
        /** Bytes of CONNECT, ACCEPT and CREATE_QUEUE_PAIR (one layout; 64 before version 6). */
        public static final int LENGTH = IPV6_OFFSET + 16 * MAX_PLANES;

        public Connect wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public int timeoutMs()
        {
            return getInt(TIMEOUT_MS_OFFSET);
        }

        /** @return planes named (CONNECT), or the plane (CREATE_QUEUE_PAIR). */
        public int planes()
        {
            return getInt(PLANES_OFFSET);
        }

        public int ipv4(final int plane)
        {
            return getInt(IPV4_OFFSET + 4 * plane);
        }

        public Connect timeoutMs(final int timeoutMs)
        {
            putInt(TIMEOUT_MS_OFFSET, timeoutMs);
            return this;
        }

        public Connect planes(final int planes)
        {
            putInt(PLANES_OFFSET, planes);
            return this;
        }

        /** The peer's IPv4 address on {@code plane}, its IPv6 address there all 0. */
        public Connect peer(final int plane, final int ipv4)
        {
            return peer(plane, ipv4, 0, 0);
        }

        /** The peer's address on {@code plane}: {@code ipv4} 0 with an IPv6 address, the IPv6 one 0 with an IPv4 one. */
        public Connect peer(final int plane, final int ipv4, final long ipv6High, final long ipv6Low)
        {
            putInt(IPV4_OFFSET + 4 * plane, ipv4);
            putIpv6(IPV6_OFFSET + 16 * plane, ipv6High, ipv6Low);
            return this;
        }

        public long ipv6High(final int plane)
        {
            return getIpv6High(IPV6_OFFSET + 16 * plane);
        }

        public long ipv6Low(final int plane)
        {
            return getIpv6Low(IPV6_OFFSET + 16 * plane);
        }
    }

    /** CONNECT_QUEUE_PAIR: the connection and the peer's RoCEv2 endpoint. */
    public static final class ConnectQueuePair extends Header
    {
        public static final int CONNECTION_ID_OFFSET = Header.LENGTH;
        public static final int QPN_OFFSET = CONNECTION_ID_OFFSET + 8;
        public static final int PSN_OFFSET = QPN_OFFSET + 4;
        public static final int IPV4_OFFSET = PSN_OFFSET + 4;
        public static final int MTU_OFFSET = IPV4_OFFSET + 4;
        public static final int TIMEOUT_MS_OFFSET = MTU_OFFSET + 4;
        /** Since version 6: the peer's IPv6 address (its GID), 16 bytes in network order; all 0 for an IPv4 peer. */
        public static final int IPV6_OFFSET = TIMEOUT_MS_OFFSET + 4;
        public static final int LENGTH = IPV6_OFFSET + 16;

        public ConnectQueuePair wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long connectionId()
        {
            return getLong(CONNECTION_ID_OFFSET);
        }

        public int qpn()
        {
            return getInt(QPN_OFFSET);
        }

        public int psn()
        {
            return getInt(PSN_OFFSET);
        }

        public int ipv4()
        {
            return getInt(IPV4_OFFSET);
        }

        public int mtu()
        {
            return getInt(MTU_OFFSET);
        }

        public int timeoutMs()
        {
            return getInt(TIMEOUT_MS_OFFSET);
        }

        public long ipv6High()
        {
            return getIpv6High(IPV6_OFFSET);
        }

        public long ipv6Low()
        {
            return getIpv6Low(IPV6_OFFSET);
        }

        /** The peer's endpoint: {@code ipv4} 0 with an IPv6 address, {@code ipv6High} and {@code ipv6Low} 0 with an IPv4 one. */
        public ConnectQueuePair set(final long connectionId, final int qpn, final int psn, final int ipv4,
            final int mtu, final int timeoutMs, final long ipv6High, final long ipv6Low)
        {
            putIpv6(IPV6_OFFSET, ipv6High, ipv6Low);
            putLong(CONNECTION_ID_OFFSET, connectionId);
            putInt(QPN_OFFSET, qpn);
            putInt(PSN_OFFSET, psn);
            putInt(IPV4_OFFSET, ipv4);
            putInt(MTU_OFFSET, mtu);
            putInt(TIMEOUT_MS_OFFSET, timeoutMs);
            return this;
        }
    }

    /**
     * START_CAPTURE: how long, the snap length, the filter's fields ({@code io.spraynic.datapath.capture.CaptureFilter}),
     * the sampling rate and each worker's ring in bytes.
     */
    public static final class StartCapture extends Header
    {
        public static final int DURATION_MS_OFFSET = Header.LENGTH;
        public static final int SNAP_LENGTH_OFFSET = DURATION_MS_OFFSET + 4;
        /** Was the ring's slots until the capture memory's version 4 (rings sized in bytes since): 0. */
        public static final int RESERVED_OFFSET = SNAP_LENGTH_OFFSET + 4;
        public static final int DIRECTIONS_OFFSET = RESERVED_OFFSET + 4;
        public static final int PORTS_OFFSET = DIRECTIONS_OFFSET + 4;
        public static final int QUEUES_OFFSET = PORTS_OFFSET + 8;
        public static final int KIND_OFFSET = QUEUES_OFFSET + 8;
        public static final int UDP_DST_PORT_OFFSET = KIND_OFFSET + 4;
        public static final int HOST_OFFSET = UDP_DST_PORT_OFFSET + 4;
        public static final int HAS_HOST_OFFSET = HOST_OFFSET + 4;
        /** One frame in this many of those the filter takes is captured (1: every frame). */
        public static final int SAMPLE_OFFSET = HAS_HOST_OFFSET + 4;
        /** Bytes of records each worker's ring has (a long: a client's word, bounded before any arithmetic). */
        public static final int RING_BYTES_OFFSET = SAMPLE_OFFSET + 4;
        public static final int LENGTH = RING_BYTES_OFFSET + 8;

        public StartCapture wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public int durationMs()
        {
            return getInt(DURATION_MS_OFFSET);
        }

        public int snapLength()
        {
            return getInt(SNAP_LENGTH_OFFSET);
        }

        public int reserved()
        {
            return getInt(RESERVED_OFFSET);
        }

        public int directions()
        {
            return getInt(DIRECTIONS_OFFSET);
        }

        public long ports()
        {
            return getLong(PORTS_OFFSET);
        }

        public long queues()
        {
            return getLong(QUEUES_OFFSET);
        }

        /** @return the ordinal of the filter's kind. */
        public int kind()
        {
            return getInt(KIND_OFFSET);
        }

        public int udpDstPort()
        {
            return getInt(UDP_DST_PORT_OFFSET);
        }

        public int host()
        {
            return getInt(HOST_OFFSET);
        }

        public int hasHost()
        {
            return getInt(HAS_HOST_OFFSET);
        }

        public int sample()
        {
            return getInt(SAMPLE_OFFSET);
        }

        public long ringBytes()
        {
            return getLong(RING_BYTES_OFFSET);
        }

        public StartCapture set(final int durationMs, final int snapLength, final int directions, final long ports,
            final long queues, final int kind, final int udpDstPort, final int host, final boolean hasHost, final int sample,
            final long ringBytes)
        {
            putInt(DURATION_MS_OFFSET, durationMs);
            putInt(SNAP_LENGTH_OFFSET, snapLength);
            putInt(RESERVED_OFFSET, 0);
            putInt(DIRECTIONS_OFFSET, directions);
            putLong(PORTS_OFFSET, ports);
            putLong(QUEUES_OFFSET, queues);
            putInt(KIND_OFFSET, kind);
            putInt(UDP_DST_PORT_OFFSET, udpDstPort);
            putInt(HOST_OFFSET, host);
            putInt(HAS_HOST_OFFSET, hasHost ? 1 : 0);
            putInt(SAMPLE_OFFSET, sample);
            putLong(RING_BYTES_OFFSET, ringBytes);
            return this;
        }
    }

    /** @return bytes a command of {@code type} has at least, or -1 for a type that is no command. */
    static int fixedLength(final int type)
    {
        return switch (type)
        {
            case ADD_CLIENT -> AddClient.LENGTH;
            case KEEPALIVE, CLOSE_CLIENT, HELLO -> Header.LENGTH;
            case OPEN_MEMORY -> ObjectCommand.LENGTH;
            case REGISTER -> Register.LENGTH;
            case DEREGISTER, CLOSE_CONNECTION, STOP_CAPTURE -> ObjectCommand.LENGTH;
            case START_CAPTURE -> StartCapture.LENGTH;
            case CONNECT, ACCEPT, CREATE_QUEUE_PAIR -> Connect.LENGTH;
            case CONNECT_QUEUE_PAIR -> ConnectQueuePair.LENGTH;
            default -> -1;
        };
    }
}
