package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every frame a queue pair sends, parsed back: addressing from the connection attributes, the BTH fields asked
 * for, ECN only on data, and pacing charged by wire time for data frames only.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcFrameOutputTest
{
    private static final long NOW = 1_000_000_000L;

    private final RcParts parts = new RcParts();
    private final RcFrameOutput output = parts.output;

    @AfterEach
    void close()
    {
        parts.close();
    }

    @Test
    void shouldAddressADataFrameToThePeerWithItsPayloadAndEcn()
    {
        output.connect(RcParts.attributes(100, 200));
        final MemoryRegion source = parts.register(512, AccessFlags.NONE);
        RcParts.fill(source.segment(), 9);
        output.writer().reth(0xABCDEF00L, 0x77, 300);
        final int length = output.emit(Opcode.RC_RDMA_WRITE_FIRST, 0x00FFFFFF, true, false, source.segment(), 12,
            RcParts.MTU, true, NOW);

        assertTrue(length > RcParts.MTU);
        assertEquals(1, parts.sentCount());
        final RoceFrame frame = parts.sent(0);
        assertEquals(length, frame.frameLength());
        assertEquals(RcParts.REMOTE_IP, frame.ipv4Destination());
        assertEquals(RcParts.LOCAL_IP, frame.ipv4Source());
        assertEquals(0xC0DE, frame.udpSourcePort());
        assertEquals(RcParts.REMOTE_QP_NUMBER, frame.destQp());
        assertEquals(Opcode.RC_RDMA_WRITE_FIRST, frame.opcode());
        assertEquals(0x00FFFFFF, frame.psn());
        assertTrue(frame.ackReq());
        assertFalse(frame.solicited());
        assertEquals(RcEngineConfig.ECT_0, frame.ecn());
        assertEquals(0xABCDEF00L, frame.rethVirtualAddress());
        assertEquals(0x77, frame.rethRkey());
        assertEquals(RcParts.MTU, frame.payloadLength());
        assertEquals(-1, source.segment().asSlice(12, RcParts.MTU)
            .mismatch(frame.segment().asSlice(frame.payloadOffset(), RcParts.MTU)));
        assertEquals(1, parts.counters.get(RcCounters.TX_PACKETS));
    }

    @Test
    void shouldSendAcknowledgementsWithoutEcnToTheNextHopMac()
    {
        output.connect(RcParts.attributes(100, 200));
        output.nextHopMac(0x02_00_00_00_00_99L);
        assertTrue(output.acknowledge(RcResponder.NAK_SEQUENCE_SYNDROME, 7, 42, NOW));

        final RoceFrame frame = parts.sent(0);
        assertEquals(0x02_00_00_00_00_99L, output.nextHopMac());
        assertEquals(0x02_00_00_00_00_99L, frame.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED
            .withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0) >>> 16, "destination MAC");
        assertEquals(Opcode.RC_ACKNOWLEDGE, frame.opcode());
        assertEquals(42, frame.psn());
        assertEquals(RcResponder.NAK_SEQUENCE_SYNDROME, frame.aethSyndrome());
        assertEquals(7, frame.aethMsn());
        assertEquals(0, frame.ecn(), "control frames are not ECN-capable");
        assertFalse(frame.ackReq());
    }

    @Test
    void shouldAddressOverIpv6WhenTheConnectionSaysSo()
    {
        output.connect(RcParts.attributes(1, 2).withIpv6(0xFD00L << 48, 1, 0xFD00L << 48, 2));
        assertTrue(output.acknowledge(RcResponder.ACK_SYNDROME, 0, 1, NOW));
        final RoceFrame frame = parts.sent(0);
        assertEquals(6, frame.ipVersion());
        assertEquals(0xFD00L << 48, frame.ipv6DestinationHigh());
        assertEquals(2, frame.ipv6DestinationLow());
        assertEquals(1, frame.ipv6SourceLow());
    }

    @Test
    void shouldSetBecnOnACongestionNotificationOnly()
    {
        output.connect(RcParts.attributes(1, 2));
        assertTrue(output.congestionNotification(NOW));
        assertTrue(output.acknowledge(RcResponder.ACK_SYNDROME, 0, 1, NOW));

        final RoceFrame cnp = parts.sent(0);
        assertEquals(Opcode.CNP, cnp.opcode());
        assertEquals(BaseTransportHeader.BECN_FLAG, cnp.resv8a() & BaseTransportHeader.BECN_FLAG);
        assertEquals(0, parts.sent(1).resv8a(), "the next frame does not inherit the flag");
        assertEquals(1, parts.counters.get(RcCounters.TX_CNP));
    }

    @Test
    void shouldCountAFullSinkAndWriteNothing()
    {
        output.connect(RcParts.attributes(1, 2));
        parts.sink.full = true;
        assertEquals(-1, output.emit(Opcode.RC_SEND_ONLY, 5, true, false, null, 0, 0, true, NOW));
        assertFalse(output.acknowledge(RcResponder.ACK_SYNDROME, 0, 1, NOW));
        assertFalse(output.congestionNotification(NOW));
        assertEquals(3, parts.counters.get(RcCounters.SINK_FULL));
        assertEquals(0, parts.counters.get(RcCounters.TX_PACKETS));
        assertEquals(0, parts.counters.get(RcCounters.TX_CNP));
        assertEquals(0, parts.sentCount());
    }

    @Test
    void shouldChargeDataFramesToThePacerByWireTimeAndControlFramesNot()
    {
        output.connect(RcParts.attributes(1, 2));
        final MemoryRegion source = parts.register(RcParts.MTU, AccessFlags.NONE);
        final DcqcnRateLimiter pacer = parts.rateLimiter;

        output.emit(Opcode.RC_SEND_ONLY, 1, true, false, source.segment(), 0, RcParts.MTU, true, NOW);
        final long afterFirst = pacer.nextSendNanos();
        final int length = output.emit(Opcode.RC_SEND_ONLY, 2, true, false, source.segment(), 0, RcParts.MTU, true, NOW);
        final long afterSecond = pacer.nextSendNanos();
        output.acknowledge(RcResponder.ACK_SYNDROME, 0, 1, NOW);
        output.congestionNotification(NOW);

        final double nanosPerByte = 8e9 / pacer.config().lineRateBitsPerSecond();
        assertEquals((long)((length + RcFrameOutput.WIRE_OVERHEAD_BYTES) * nanosPerByte), afterSecond - afterFirst,
            "frame plus preamble, FCS and gap");
        assertEquals(afterSecond, pacer.nextSendNanos(), "ACKs and CNPs are not paced");
    }
}
