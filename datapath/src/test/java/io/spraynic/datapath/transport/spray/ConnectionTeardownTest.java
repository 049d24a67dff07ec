package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.Wire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How a connection ends (docs/PROTOCOL.md S9.2, S9.5): B's {@link ConnectionTeardown} is handed the CLOSE A sent
 * (copied off the wire, and kept from B) as it is or made hostile. A CLOSE naming another sender CID, or a CLOSE_ACK
 * answering no close of B's, is counted malformed and ends nothing; the peer's CLOSE is answered, flushes B's posted
 * receive and has B forgotten; an abort flushes at once, sends nothing and is done once; a local error closes on
 * the tick.
 */
@Timeout(60)
class ConnectionTeardownTest
{
    private static final long CONH = SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH;

    private final List<byte[]> closes = new ArrayList<>();
    private final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), false);
    private SprayTestBed bed;

    @BeforeEach
    void open()
    {
        // A's CLOSEs are copied, and corrupted on their way (B's parser drops them for their ICRC)
        final SprayTestBed.Options options = new SprayTestBed.Options().wrapA((plane, port) ->
        {
            final SprayTestBed.SwitchablePort watched = new SprayTestBed.SwitchablePort(port);
            watched.corrupt = (memory, offset, length) ->
            {
                final boolean close = length > CONH &&
                    BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH) == SprayOpcodes.CLOSE;
                if (close)
                {
                    closes.add(memory.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
                }
                return close;
            };
            return watched;
        });
        bed = new SprayTestBed(options);
    }

    @AfterEach
    void close()
    {
        bed.close();
    }

    private RoceFrame closeOfA(final int senderCid)
    {
        assertTrue(bed.a.beginClose(bed.now));
        bed.runUntil(() -> !closes.isEmpty(), 10_000);
        final byte[] bytes = closes.get(0);
        final MemorySegment copy = Arena.ofAuto().allocate(bytes.length);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, copy, 0, bytes.length);
        if (senderCid >= 0)
        {
            copy.set(Wire.INT_BE, CONH + ConnectionHeader.SENDER_CID_OFFSET, senderCid);
        }
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, parser.parse(copy, 0, bytes.length, frame));
        return frame;
    }

    private void postReceiveAtB()
    {
        final MemoryRegion dst = bed.region(bed.pdB, 4096, AccessFlags.LOCAL_WRITE, 0);
        assertEquals(PostResult.OK, bed.b.postReceive(0, new ReceiveWorkRequest().wrId(77)
            .buffer(dst, dst.address(), 4096)));
    }

    private void assertReceiveFlushed()
    {
        final List<WorkCompletion> done = SprayTestBed.drain(bed.receiveCqB);
        assertEquals(1, done.size());
        assertEquals(77, done.get(0).wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, done.get(0).status());
    }

    @Test
    void shouldIgnoreACloseNamingAnotherSenderS92()
    {
        final RoceFrame forged = closeOfA(0x00ABCD);
        final long malformed = bed.engineB.counters().get(SprayCounters.MALFORMED);
        bed.b.teardown().onClosePacket(forged);
        assertEquals(malformed + 1, bed.engineB.counters().get(SprayCounters.MALFORMED));
        assertEquals(0, bed.b.counters().get(SprayCounters.CLOSES_RECEIVED));
        assertEquals(SprayConnection.State.ESTABLISHED, bed.b.state());
    }

    @Test
    void shouldAnswerThePeersCloseFlushAndBeForgottenS92()
    {
        postReceiveAtB();
        final RoceFrame close = closeOfA(-1);
        final int cid = bed.b.localCid();
        bed.b.teardown().onClosePacket(close);
        assertEquals(1, bed.b.counters().get(SprayCounters.CLOSES_RECEIVED));
        assertTrue(bed.b.isClosed());
        assertEquals(null, bed.engineB.connection(cid), "the engine forgot it");
        assertReceiveFlushed();
    }

    @Test
    void shouldIgnoreACloseAckAnsweringNoCloseS92()
    {
        final RoceFrame unasked = closeOfA(-1); // B began no close: no token of its is answered
        final long malformed = bed.engineB.counters().get(SprayCounters.MALFORMED);
        bed.b.teardown().onCloseAckPacket(unasked);
        assertEquals(malformed + 1, bed.engineB.counters().get(SprayCounters.MALFORMED));
        assertEquals(SprayConnection.State.ESTABLISHED, bed.b.state());
    }

    @Test
    void shouldFlushOnAbortOnceAndSendNothing()
    {
        postReceiveAtB();
        final long closesSent = bed.b.counters().get(SprayCounters.CLOSES_SENT);
        bed.b.teardown().abort();
        assertTrue(bed.b.isClosed());
        assertReceiveFlushed();
        bed.b.teardown().abort(); // a second abort finds it closed: nothing more completes
        assertTrue(SprayTestBed.drain(bed.receiveCqB).isEmpty());
        assertEquals(closesSent, bed.b.counters().get(SprayCounters.CLOSES_SENT));
    }

    @Test
    void shouldCloseOnTheTickAfterALocalError()
    {
        postReceiveAtB();
        assertFalse(bed.b.teardown().endsOnTick(false, bed.now), "nothing ends a healthy connection");
        assertTrue(bed.b.teardown().endsOnTick(true, bed.now));
        assertTrue(bed.b.isClosed());
        assertReceiveFlushed();
    }
}
