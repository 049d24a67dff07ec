package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.ProtectionDomain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S4.3, S11: the engine refuses a connection whose full-MTU frames its output cannot carry (a 1500 B
 * port and the default 4096 MTU), as an RC queue pair does, instead of writing frames the port drops on every try.
 */
@Timeout(10)
class SprayFrameSizeTest
{
    private final CompletionQueue cq = new CompletionQueue(16);

    private SprayEngine engine(final RecordingFrameSink sink)
    {
        final SprayConfig config = new SprayConfig().planes(1).local(0, 0x0A000001, 0x020000000001L)
            .localIpv6(0, 0xFD00_0001_0000_0000L, 0x10).seed(1);
        return new SprayEngine(config, new ProtectionDomain(), sink);
    }

    private SprayConnectionConfig connection(final int mtu)
    {
        return new SprayConnectionConfig().cids(5, 6).keysFromCids().paths(2).mtu(mtu).streams(1)
            .depths(8, 8, 8).completionQueues(cq, cq).remote(0, 0x0A000002, 0x020000000002L);
    }

    @Test
    void shouldCountEveryHeaderOfTheLongestDataFrame()
    {
        // Ethernet, IPv4, UDP, BTH, SETH, RETH, ImmDt, ICRC around the payload
        assertEquals(4096 + 14 + 20 + 8 + 12 + 28 + 16 + 4 + 4, SprayFrameSize.largestDataFrame(4096, false, false));
        assertEquals(4096 + 18 + 40 + 8 + 12 + 28 + 16 + 4 + 4, SprayFrameSize.largestDataFrame(4096, true, true));
        assertEquals(1024, SprayFrameSize.largestMtu(1514, SprayFrameSize.largestDataFrame(0, false, false)));
        assertEquals(4096, SprayFrameSize.largestMtu(4202, 106));
        assertEquals(2048, SprayFrameSize.largestMtu(4201, 106));
        assertEquals(0, SprayFrameSize.largestMtu(256 + 105, 106));
        assertEquals(0, SprayFrameSize.largestMtu(-1, 106), "hostile: a negative frame length");
    }

    @Test
    void shouldRefuseToOpenAConnectionWhoseFramesThePortCannotCarry()
    {
        final RecordingFrameSink sink = new RecordingFrameSink(1514);
        final SprayEngine engine = engine(sink);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> engine.open(connection(4096)));
        assertEquals("MTU 4096 needs frames of up to 4202 B on plane 0 (IPv4), but the output carries at most 1514 B: " +
            "lower the MTU to 1024 (S4.3, S11)", refused.getMessage());
        assertEquals(0, engine.connectionCount());

        final SprayConnection fits = engine.open(connection(1024));
        assertEquals(1024, fits.mtu());
    }

    @Test
    void shouldJudgeTheFrameByThePeersAddressFamily()
    {
        final int ipv4Exact = SprayFrameSize.largestDataFrame(1024, false, false);
        final SprayEngine engine = engine(new RecordingFrameSink(ipv4Exact));
        engine.open(connection(1024)); // an IPv4 peer: fits to the byte
        final SprayConnectionConfig overIpv6 = connection(1024).cids(7, 8).keysFromCids()
            .remoteIpv6(0, 0xFD00_0001_0000_0000L, 0x20, 0x020000000002L);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> engine.open(overIpv6));
        assertTrue(refused.getMessage().contains("(IPv6)"), refused.getMessage());
    }

    @Test
    void shouldRefuseToOfferOrAcceptAnMtuThePortCannotCarry()
    {
        final RecordingFrameSink sink = new RecordingFrameSink(1514);
        final SprayEngine engine = engine(sink);
        assertThrows(IllegalArgumentException.class, () -> engine.connect(connection(2048).cids(0, 0), 0));
        assertEquals(0, sink.commits, "no CONNECT offered an MTU this end cannot send");

        // a listener's peers are unknown: where this end has an IPv6 address, they may come over IPv6
        final RecordingFrameSink exactForIpv4 = new RecordingFrameSink(SprayFrameSize.largestDataFrame(1024, false, false));
        final SprayEngine listener = engine(exactForIpv4);
        assertThrows(IllegalArgumentException.class, () -> listener.listen(connection(1024), null));
        listener.listen(connection(512), null);

        engine.connect(connection(1024).cids(0, 0), 0);
        assertEquals(1, sink.commits, "the CONNECT of an MTU that fits");
    }
}
