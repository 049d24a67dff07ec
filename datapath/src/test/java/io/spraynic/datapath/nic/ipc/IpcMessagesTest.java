package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.verbs.AccessFlags;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IpcMessagesTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);

    @Test
    void shouldReadBackEveryFieldAtAnOffset()
    {
        final IpcAnswers.RegionReady ready = new IpcAnswers.RegionReady().wrap(buffer, 8);
        final int length = ready.set(7, 0x7F00_0000_1000L, 1 << 20, 0x1234, 0x5678, AccessFlags.ALL, "mr-1-7");
        ready.ids(3, 99);
        assertEquals(IpcAnswers.RegionReady.FILE_OFFSET + 4 + 6, length);
        final IpcAnswers.RegionReady read = new IpcAnswers.RegionReady().wrap(buffer, 8);
        assertEquals(3, read.clientId());
        assertEquals(99, read.correlationId());
        assertEquals(7, read.regionId());
        assertEquals(0x7F00_0000_1000L, read.address());
        assertEquals(1 << 20, read.regionLength());
        assertEquals(0x1234, read.lkey());
        assertEquals(0x5678, read.rkey());
        assertEquals(AccessFlags.ALL, read.access());
        assertEquals("mr-1-7", read.file());

        final IpcMessages.Connect connect = new IpcMessages.Connect().wrap(buffer, 0);
        connect.timeoutMs(500).planes(IpcMessages.MAX_PLANES);
        for (int p = 0; p < IpcMessages.MAX_PLANES; p++)
        {
            connect.peer(p, 0x0A00_0000 + p);
        }
        for (int p = 0; p < IpcMessages.MAX_PLANES; p++)
        {
            assertEquals(0x0A00_0000 + p, connect.ipv4(p));
        }
        assertEquals(500, connect.timeoutMs());
        assertEquals(IpcMessages.MAX_PLANES, connect.planes());
        // since version 6: an IPv6 peer per plane, 16 bytes in network order after the eight IPv4 addresses
        assertEquals(64, IpcMessages.Connect.IPV6_OFFSET);
        assertEquals(192, IpcMessages.Connect.LENGTH);
        connect.peer(7, 0, 0xFD00_0001_0000_0000L, 0x20L);
        assertEquals(0, connect.ipv4(7));
        assertEquals(0xFD00_0001_0000_0000L, connect.ipv6High(7));
        assertEquals(0x20L, connect.ipv6Low(7));
        assertEquals((byte)0xFD, buffer.getByte(IpcMessages.Connect.IPV6_OFFSET + 16 * 7));
        assertEquals((byte)0x20, buffer.getByte(IpcMessages.Connect.IPV6_OFFSET + 16 * 7 + 15));
        assertEquals(0L, connect.ipv6High(6) | connect.ipv6Low(6), "an IPv4 plane's IPv6 address is all 0");
    }

    @Test
    void shouldCutAnErrorMessageToWhatAResponseHolds()
    {
        final IpcAnswers.Error error = new IpcAnswers.Error().wrap(buffer, 0);
        final int length = error.set(IpcMessages.REGISTER, IpcMessages.ERR_LIMIT, "x".repeat(2000));
        assertEquals(IpcAnswers.Error.MAX_LENGTH, length);
        assertEquals(IpcMessages.MAX_STRING_BYTES, error.message().length());
        assertEquals(IpcMessages.REGISTER, error.commandType());
        assertEquals(IpcMessages.ERR_LIMIT, error.code());
    }

    @Test
    void shouldCarryAQueuePairsIpv6AddressAsItsSixteenBytesInNetworkOrder()
    {
        // fd00:1::20 (version 6, I1.2a): the bytes as the address is written, whatever the order of the other fields
        final long high = 0xFD00_0001_0000_0000L;
        final long low = 0x20L;
        final IpcMessages.ConnectQueuePair command = new IpcMessages.ConnectQueuePair().wrap(buffer, 0);
        command.set(9, 0x11, 0x22, 0, 1024, 500, high, low);
        final int at = IpcMessages.ConnectQueuePair.IPV6_OFFSET;
        assertEquals((byte)0xFD, buffer.getByte(at));
        assertEquals((byte)0x01, buffer.getByte(at + 3));
        assertEquals((byte)0x20, buffer.getByte(at + 15));
        assertEquals(high, command.ipv6High());
        assertEquals(low, command.ipv6Low());
        assertEquals(500, command.timeoutMs());
        assertEquals(IpcMessages.ConnectQueuePair.LENGTH, at + 16);

        buffer.setMemory(0, 1024, (byte)0);
        final IpcAnswers.ConnectionReady ready = new IpcAnswers.ConnectionReady().wrap(buffer, 0);
        final int length = ready.set(4, 1, 0x11, 1, 0, 0x22, 0, 1024, high, low, "");
        assertEquals(IpcAnswers.ConnectionReady.FILE_OFFSET + 4, length);
        assertEquals((byte)0xFD, buffer.getByte(IpcAnswers.ConnectionReady.IPV6_OFFSET));
        assertEquals(high, ready.ipv6High());
        assertEquals(low, ready.ipv6Low());
        assertEquals(1024, ready.mtu());
        assertEquals("", ready.file());
    }

    @Test
    void shouldKnowTheFixedLengthOfEveryCommandAndNoOtherType()
    {
        for (int type = IpcMessages.ADD_CLIENT; type <= IpcMessages.CLOSE_CONNECTION; type++)
        {
            assertTrue(IpcMessages.fixedLength(type) >= IpcMessages.Header.LENGTH, IpcMessages.name(type));
        }
        assertEquals(-1, IpcMessages.fixedLength(IpcMessages.OK));
        assertEquals(-1, IpcMessages.fixedLength(0));
        assertEquals("UNKNOWN_77", IpcMessages.name(77));
        // every response fits the 1 KiB buffers both sides encode into and the to-NIC ring's largest message
        final ManyToOneRingBuffer ring = new ManyToOneRingBuffer(new UnsafeBuffer(ByteBuffer.allocateDirect(
            IpcFileDescriptor.TO_NIC_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH)));
        assertTrue(IpcMessages.Connect.LENGTH <= ring.maxMsgLength());
        for (int type = IpcMessages.ADD_CLIENT; type <= IpcMessages.CLOSE_CONNECTION; type++)
        {
            assertTrue(IpcMessages.fixedLength(type) <= IpcMessages.MAX_COMMAND_LENGTH, IpcMessages.name(type));
        }
        assertEquals(32, IpcMessages.AddClient.LENGTH, "since version 5: the pid only, no answer file");
        assertEquals(IpcMessages.Header.LENGTH, IpcMessages.fixedLength(IpcMessages.HELLO));
        assertEquals(IpcMessages.ObjectCommand.LENGTH, IpcMessages.fixedLength(IpcMessages.OPEN_MEMORY));
        assertTrue(IpcAnswers.ConnectionReady.MAX_LENGTH <= 1024);
        assertFalse(IpcAnswers.Error.MAX_LENGTH > 1024);
    }
}
