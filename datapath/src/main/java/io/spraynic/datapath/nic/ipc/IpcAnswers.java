package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.ipc.IpcMessages.Header;
import org.agrona.MutableDirectBuffer;

import static io.spraynic.datapath.nic.ipc.IpcMessages.*;

/**
 * The answers the NIC writes into a client's answer ring (and refusals on the broadcast), apart from the commands
 * ({@link IpcMessages}): OK, ERROR, REGION_READY, CONNECTION_READY, CONNECTION_CLOSED and CAPTURE_READY. Flyweights
 * over a buffer like the commands: the common {@link Header}, named offsets, little-endian.
 */
public final class IpcAnswers
{
    private IpcAnswers()
    {
    }

    /**
     * OK: one value (the client timeout for ADD_CLIENT, whose header also carries the new client's id and token; the
     * region id for DEREGISTER).
     */
    public static final class Ok extends Header
    {
        public static final int VALUE_OFFSET = Header.LENGTH;
        public static final int LENGTH = VALUE_OFFSET + 8;

        public Ok wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long value()
        {
            return getLong(VALUE_OFFSET);
        }

        public Ok value(final long value)
        {
            putLong(VALUE_OFFSET, value);
            return this;
        }
    }

    /** ERROR: the command's type, an error code ({@code ERR_*}) and a reason for a person. */
    public static final class Error extends Header
    {
        public static final int COMMAND_TYPE_OFFSET = Header.LENGTH;
        public static final int CODE_OFFSET = COMMAND_TYPE_OFFSET + 4;
        public static final int MESSAGE_OFFSET = CODE_OFFSET + 4;
        public static final int MAX_LENGTH = MESSAGE_OFFSET + 4 + MAX_STRING_BYTES;

        public Error wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public int commandType()
        {
            return getInt(COMMAND_TYPE_OFFSET);
        }

        public int code()
        {
            return getInt(CODE_OFFSET);
        }

        public String message()
        {
            return getString(MESSAGE_OFFSET);
        }

        /**
         * @return the message of an ERROR of {@code length} bytes another process wrote, or null when its length prefix
         * is negative, longer than any message or past the answer's end.
         */
        public String boundedMessage(final int length)
        {
            return getBoundedString(MESSAGE_OFFSET, length, MAX_STRING_BYTES);
        }

        /** @return the message's length in bytes. */
        public int set(final int commandType, final int code, final String message)
        {
            putInt(COMMAND_TYPE_OFFSET, commandType);
            putInt(CODE_OFFSET, code);
            return MESSAGE_OFFSET + putString(MESSAGE_OFFSET, message);
        }
    }

    /** REGION_READY: the region's id, keys, NIC-side virtual address, length, access and file name. */
    public static final class RegionReady extends Header
    {
        public static final int REGION_ID_OFFSET = Header.LENGTH;
        public static final int ADDRESS_OFFSET = REGION_ID_OFFSET + 8;
        public static final int LENGTH_OFFSET = ADDRESS_OFFSET + 8;
        public static final int LKEY_OFFSET = LENGTH_OFFSET + 8;
        public static final int RKEY_OFFSET = LKEY_OFFSET + 4;
        public static final int ACCESS_OFFSET = RKEY_OFFSET + 4;
        public static final int FILE_OFFSET = ACCESS_OFFSET + 4;
        public static final int MAX_LENGTH = FILE_OFFSET + 4 + MAX_STRING_BYTES;

        public RegionReady wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long regionId()
        {
            return getLong(REGION_ID_OFFSET);
        }

        public long address()
        {
            return getLong(ADDRESS_OFFSET);
        }

        public long regionLength()
        {
            return getLong(LENGTH_OFFSET);
        }

        public int lkey()
        {
            return getInt(LKEY_OFFSET);
        }

        public int rkey()
        {
            return getInt(RKEY_OFFSET);
        }

        public int access()
        {
            return getInt(ACCESS_OFFSET);
        }

        public String file()
        {
            return getString(FILE_OFFSET);
        }

        /** @return the message's length in bytes. */
        public int set(final long regionId, final long address, final long length, final int lkey, final int rkey,
            final int access, final String file)
        {
            putLong(REGION_ID_OFFSET, regionId);
            putLong(ADDRESS_OFFSET, address);
            putLong(LENGTH_OFFSET, length);
            putInt(LKEY_OFFSET, lkey);
            putInt(RKEY_OFFSET, rkey);
            putInt(ACCESS_OFFSET, access);
            return FILE_OFFSET + putString(FILE_OFFSET, file);
        }
    }

    /** CONNECTION_READY: the connection's id and shape, its RoCEv2 endpoint (queue pairs) and its rings' file. */
    public static final class ConnectionReady extends Header
    {
        public static final int CONNECTION_ID_OFFSET = Header.LENGTH;
        public static final int KIND_OFFSET = CONNECTION_ID_OFFSET + 8;
        public static final int LOCAL_ID_OFFSET = KIND_OFFSET + 4;
        public static final int STREAMS_OFFSET = LOCAL_ID_OFFSET + 4;
        public static final int PLANE_OFFSET = STREAMS_OFFSET + 4;
        public static final int PSN_OFFSET = PLANE_OFFSET + 4;
        public static final int IPV4_OFFSET = PSN_OFFSET + 4;
        public static final int MTU_OFFSET = IPV4_OFFSET + 4;
        /** Since version 6: a queue pair's IPv6 address (its GID), network order; all 0 for IPv4 and for spray. */
        public static final int IPV6_OFFSET = MTU_OFFSET + 4;
        public static final int FILE_OFFSET = IPV6_OFFSET + 16;
        public static final int MAX_LENGTH = FILE_OFFSET + 4 + MAX_STRING_BYTES;

        public ConnectionReady wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long connectionId()
        {
            return getLong(CONNECTION_ID_OFFSET);
        }

        /** @return 0 spray, 1 RoCEv2 (ordinal of NicConnection.Kind). */
        public int kind()
        {
            return getInt(KIND_OFFSET);
        }

        public int localId()
        {
            return getInt(LOCAL_ID_OFFSET);
        }

        public int streams()
        {
            return getInt(STREAMS_OFFSET);
        }

        public int plane()
        {
            return getInt(PLANE_OFFSET);
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

        public String file()
        {
            return getString(FILE_OFFSET);
        }

        public long ipv6High()
        {
            return getIpv6High(IPV6_OFFSET);
        }

        public long ipv6Low()
        {
            return getIpv6Low(IPV6_OFFSET);
        }

        /** @return the message's length in bytes. */
        public int set(final long connectionId, final int kind, final int localId, final int streams, final int plane,
            final int psn, final int ipv4, final int mtu, final long ipv6High, final long ipv6Low, final String file)
        {
            putIpv6(IPV6_OFFSET, ipv6High, ipv6Low);
            putLong(CONNECTION_ID_OFFSET, connectionId);
            putInt(KIND_OFFSET, kind);
            putInt(LOCAL_ID_OFFSET, localId);
            putInt(STREAMS_OFFSET, streams);
            putInt(PLANE_OFFSET, plane);
            putInt(PSN_OFFSET, psn);
            putInt(IPV4_OFFSET, ipv4);
            putInt(MTU_OFFSET, mtu);
            return FILE_OFFSET + putString(FILE_OFFSET, file);
        }
    }

    /** CONNECTION_CLOSED: what the drain found, as {@code DrainReport.ConnectionDrain}. */
    public static final class ConnectionClosed extends Header
    {
        public static final int CONNECTION_ID_OFFSET = Header.LENGTH;
        public static final int POSTED_SENDS_OFFSET = CONNECTION_ID_OFFSET + 8;
        public static final int POSTED_RECEIVES_OFFSET = POSTED_SENDS_OFFSET + 8;
        public static final int WAITING_OFFSET = POSTED_RECEIVES_OFFSET + 8;
        public static final int IDLE_OFFSET = WAITING_OFFSET + 4;
        public static final int LENGTH = IDLE_OFFSET + 4;

        public ConnectionClosed wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long connectionId()
        {
            return getLong(CONNECTION_ID_OFFSET);
        }

        public long postedSends()
        {
            return getLong(POSTED_SENDS_OFFSET);
        }

        public long postedReceives()
        {
            return getLong(POSTED_RECEIVES_OFFSET);
        }

        public int waiting()
        {
            return getInt(WAITING_OFFSET);
        }

        public boolean idle()
        {
            return getInt(IDLE_OFFSET) != 0;
        }

        public ConnectionClosed set(final long connectionId, final long postedSends, final long postedReceives,
            final int waiting, final boolean idle)
        {
            putLong(CONNECTION_ID_OFFSET, connectionId);
            putLong(POSTED_SENDS_OFFSET, postedSends);
            putLong(POSTED_RECEIVES_OFFSET, postedReceives);
            putInt(WAITING_OFFSET, waiting);
            putInt(IDLE_OFFSET, idle ? 1 : 0);
            return this;
        }
    }

    /** CAPTURE_READY: the capture's id and the path through which the client maps its memory. */
    public static final class CaptureReady extends Header
    {
        public static final int CAPTURE_ID_OFFSET = Header.LENGTH;
        public static final int PATH_OFFSET = CAPTURE_ID_OFFSET + 8;
        public static final int MAX_LENGTH = PATH_OFFSET + 4 + MAX_STRING_BYTES;

        public CaptureReady wrap(final MutableDirectBuffer buffer, final int offset)
        {
            super.wrap(buffer, offset);
            return this;
        }

        public long captureId()
        {
            return getLong(CAPTURE_ID_OFFSET);
        }

        public String path()
        {
            return getString(PATH_OFFSET);
        }

        /** @return the message's length in bytes. */
        public int set(final long captureId, final String path)
        {
            putLong(CAPTURE_ID_OFFSET, captureId);
            return PATH_OFFSET + putString(PATH_OFFSET, path);
        }
    }
}
