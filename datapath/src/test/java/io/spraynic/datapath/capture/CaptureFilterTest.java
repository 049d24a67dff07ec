package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CaptureFilterTest
{
    /** Ethernet, IPv4 10.0.0.1 to {@code dst}, UDP to {@code port}, then a first payload byte (a BTH's opcode). */
    static MemorySegment udpFrame(final int dst, final int port, final int opcode, final boolean vlan)
    {
        final int l2 = vlan ? 18 : 14;
        final MemorySegment f = MemorySegment.ofArray(new byte[l2 + 20 + 8 + 12]);
        if (vlan)
        {
            f.set(Wire.SHORT_BE, 12, (short)0x8100);
        }
        f.set(Wire.SHORT_BE, l2 - 2, (short)0x0800);
        f.set(Wire.BYTE, l2, (byte)0x45);
        f.set(Wire.BYTE, l2 + 9, (byte)17);
        f.set(Wire.INT_BE, l2 + 12, Wire.parseIpv4("10.0.0.1"));
        f.set(Wire.INT_BE, l2 + 16, dst);
        f.set(Wire.SHORT_BE, l2 + 22, (short)port);
        f.set(Wire.BYTE, l2 + 28, (byte)opcode);
        return f;
    }

    @Test
    void shouldParseEveryTermAndWriteItBackTheSameWay()
    {
        final CaptureFilter f = CaptureFilter.parse("rx and port 0,1 and queue 3 and spray and udp dst port 4791 and host 10.0.0.2");
        assertEquals(1 << TappingPacketPort.RX, f.directions());
        assertEquals(0b11, f.ports());
        assertEquals(0b1000, f.queues());
        assertEquals(CaptureFilter.Kind.SPRAY, f.kind());
        assertEquals(4791, f.udpDstPort());
        assertTrue(f.hasHost());
        assertEquals(f, CaptureFilter.parse(f.toString()));
        assertEquals(CaptureFilter.ALL, CaptureFilter.parse(""));
        assertEquals(CaptureFilter.ALL, CaptureFilter.parse("  "));
        assertEquals("", CaptureFilter.ALL.toString());
        assertFalse(CaptureFilter.ALL.checksFrames());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "rx and tx|a frame is either received or transmitted",
        "port|the filter ends early: write port N[,N...]",
        "port 64|'64' is not a port (0..63)",
        "queue 1,,2|'' is not a queue (0..63)",
        "spray and rocev2|a frame is spray or RoCEv2",
        "udp port 4791|write the UDP term as: udp dst port N",
        "udp dst port 70000|'70000' is not a UDP port",
        "host 10.0.0|host 10.0.0 is not an IPv4 address",
        "rx tx|expected 'and' after rx, not 'tx'",
        "rx and|the filter ends with 'and'",
        "ether proto 0x0800|unknown filter term 'ether'"})
    void shouldRefuseAnExpressionWithAReason(final String expression, final String reason)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse(expression));
        assertTrue(ex.getMessage().contains(reason), ex.getMessage());
    }

    @Test
    void shouldRefusePortsAndQueuesTheNicHasNot()
    {
        assertNull(CaptureFilter.parse("port 1 and queue 3").problem(2, 4));
        assertTrue(CaptureFilter.parse("port 2").problem(2, 4).contains("port 2 is not one of the NIC's ports 0..1"));
        assertTrue(CaptureFilter.parse("queue 4").problem(2, 4).contains("queue 4 is not one of the NIC's queues 0..3"));
        assertNull(CaptureFilter.ALL.problem(1, 1));
        assertThrows(IllegalArgumentException.class, () -> new CaptureFilter(0, -1, -1, CaptureFilter.Kind.ANY, -1, 0, false));
        assertThrows(IllegalArgumentException.class, () -> new CaptureFilter(3, 0, -1, CaptureFilter.Kind.ANY, -1, 0, false));
    }

    @Test
    void shouldTellSprayFromRocev2AndCheckPortAndHost()
    {
        final int peer = Wire.parseIpv4("10.0.0.2");
        final MemorySegment spray = udpFrame(peer, 4791, 0xC0, false);
        final MemorySegment rocev2 = udpFrame(peer, 4791, 0x0A, true);
        final MemorySegment dns = udpFrame(Wire.parseIpv4("10.0.0.9"), 53, 0, false);
        final CaptureFilter sprayOnly = CaptureFilter.parse("spray");
        final CaptureFilter rocev2Only = CaptureFilter.parse("rocev2");
        final CaptureFilter toPeer = CaptureFilter.parse("host 10.0.0.2");
        final CaptureFilter port53 = CaptureFilter.parse("udp dst port 53");
        assertTrue(sprayOnly.matches(spray, 0, (int)spray.byteSize()));
        assertFalse(sprayOnly.matches(rocev2, 0, (int)rocev2.byteSize()));
        assertTrue(rocev2Only.matches(rocev2, 0, (int)rocev2.byteSize()), "behind a VLAN tag too");
        assertFalse(rocev2Only.matches(dns, 0, (int)dns.byteSize()));
        assertTrue(toPeer.matches(spray, 0, (int)spray.byteSize()));
        assertTrue(CaptureFilter.parse("host 10.0.0.1").matches(dns, 0, (int)dns.byteSize()), "the source counts");
        assertFalse(toPeer.matches(dns, 0, (int)dns.byteSize()));
        assertTrue(port53.matches(dns, 0, (int)dns.byteSize()));
        assertFalse(port53.matches(spray, 0, (int)spray.byteSize()));
        for (int length = 0; length < spray.byteSize(); length++)
        {
            // a truncation that cuts the opcode off is refused, the rest decided, never reading past the frame (a
            // slice throws when read beyond)
            assertEquals(length >= 14 + 20 + 8 + 1, sprayOnly.matches(spray.asSlice(0, length), 0, length), "length " + length);
        }
    }
}
