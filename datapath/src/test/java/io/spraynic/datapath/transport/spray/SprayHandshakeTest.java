package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S9.1 connection set-up on the wire: CONNECT / CONNECT_ACK with a token, CIDs exchanged, the minimum of
 * each pair of limits, retransmission of a lost CONNECT and of a lost CONNECT_ACK without opening twice;
 * then data flows over the negotiated connection.
 */
class SprayHandshakeTest
{
    private static FaultInjectingPacketPort.Selector opcode(final int opcode)
    {
        return (memory, offset, length) -> length > SprayTestBed.DATA_OFFSET_BTH &&
            BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH) == opcode;
    }

    @Test
    void shouldEstablishWithTheMinimumOfBothLimitsAndCarryDataS91()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.responderPaths = 6;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            assertNotNull(bed.a);
            assertNotNull(bed.b);
            assertEquals(2, bed.pending.tries(), "a CONNECT, a RETRY, the CONNECT with the cookie");
            assertEquals(1, bed.pending.retries());
            assertEquals(6, bed.a.paths());
            assertEquals(6, bed.b.paths());
            assertEquals(bed.b.localCid(), bed.a.remoteCid());
            assertEquals(bed.a.localCid(), bed.b.remoteCid());
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 2 << 20);
            w.post();
            w.runAndVerify(200_000);
        }
    }

    @ParameterizedTest(name = "S5.5: ipv6={0}")
    @ValueSource(booleans = {false, true})
    void shouldReachTheInitiatorOnEveryPlaneByTheAddressesItsConnectCarriesS55(final boolean ipv6)
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.ipv6 = ipv6;
        options.resolverMustNotBeAsked = true;
        // every frame B sends on plane 1 must be addressed to A's plane-1 address, which only the CONNECT told B
        final int[] checked = new int[1];
        final int[] misaddressed = new int[1];
        options.wrapB((plane, port) -> plane != 1 ? port : FaultInjectingPacketPort.exact(port, (memory, offset, length) ->
        {
            checked[0]++;
            final boolean macOk = EthernetHeader.destinationMac(memory, offset) == SprayTestBed.mac(1, 1);
            final long ip = offset + EthernetHeader.LENGTH;
            final boolean ipOk = ipv6 ?
                memory.get(Wire.LONG_BE, ip + 24) == (SprayTestBed.IPV6_PREFIX | 1) && memory.get(Wire.LONG_BE, ip + 32) == 1 :
                memory.get(Wire.INT_BE, ip + 16) == SprayTestBed.ip(1, 1);
            if (!macOk || !ipOk)
            {
                misaddressed[0]++;
            }
            return false;
        }));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 2 << 20);
            w.post();
            w.runAndVerify(200_000);
            assertTrue(checked[0] > 100, "B sent on plane 1: " + checked[0]);
            assertEquals(0, misaddressed[0], "B addressed plane 1 as the CONNECT said");
        }
    }

    @Test
    void shouldEstablishCarryDataAndCloseOverIpv6S91S92()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.ipv6 = true;
        final int[] connectionPacketsOverIpv6 = new int[1];
        final FaultInjectingPacketPort.Selector conhOverIpv6 = (memory, offset, length) ->
        {
            if (length > SprayTestBed.DATA_OFFSET_BTH + 40 &&
                memory.get(java.lang.foreign.ValueLayout.JAVA_BYTE, offset + 14) >>> 4 == 6)
            {
                final int opcode = BaseTransportHeader.opcode(memory, offset + 14 + 40 + 8);
                if (opcode == SprayOpcodes.CONNECT || opcode == SprayOpcodes.CONNECT_RETRY ||
                    opcode == SprayOpcodes.CONNECT_ACK || opcode == SprayOpcodes.CLOSE || opcode == SprayOpcodes.CLOSE_ACK)
                {
                    connectionPacketsOverIpv6[0]++;
                }
            }
            return false;
        };
        options.wrapA((plane, port) -> FaultInjectingPacketPort.exact(port, conhOverIpv6));
        options.wrapB((plane, port) -> FaultInjectingPacketPort.exact(port, conhOverIpv6));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            assertEquals(4, connectionPacketsOverIpv6[0], "CONNECT, RETRY, CONNECT and CONNECT_ACK, all over IPv6");
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 1 << 20);
            w.post();
            w.runAndVerify(200_000);
            bed.engineA.close(bed.a, bed.now);
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            assertEquals(6, connectionPacketsOverIpv6[0], "then CLOSE and CLOSE_ACK over IPv6 (S9.2)");
            assertEquals(0, bed.a.counters().get(SprayCounters.CLOSE_TIMEOUTS), "closed by the answer, not a timeout");
            assertEquals(0, bed.engineA.counters().get(SprayCounters.MALFORMED));
            assertEquals(0, bed.engineB.counters().get(SprayCounters.MALFORMED));
        }
    }

    @Test
    void shouldRetransmitALostConnectAndAnswerARepeatedOneOnceS91()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        // lose the first CONNECT (A, plane 0) and the first CONNECT_ACK (B, plane 0)
        options.wrapA((plane, port) -> plane == 0 ? FaultInjectingPacketPort.exact(port, opcode(SprayOpcodes.CONNECT)).dropAt(0) : port);
        options.wrapB((plane, port) -> plane == 0 ? FaultInjectingPacketPort.exact(port, opcode(SprayOpcodes.CONNECT_ACK)).dropAt(0) : port);
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            // CONNECT lost; CONNECT after 100 us, RETRY, CONNECT with the cookie, its ACK lost; CONNECT after 400 us
            assertEquals(4, bed.pending.tries());
            assertTrue(bed.steps >= 500, "100 us then 400 us of backoff: " + bed.steps);
            assertNotNull(bed.engineB.connection(bed.a.remoteCid()));
            assertEquals(0, bed.engineB.connection(bed.a.remoteCid()).index(), "B opened one connection, in its first slot");
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 1 << 20);
            w.post();
            w.runAndVerify(200_000);
        }
    }

    @Test
    void shouldFailAfterEightUnansweredConnectsS91()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.wrapA((plane, port) -> new FaultInjectingPacketPort(port, 1, 1.0, 0, 0, opcode(SprayOpcodes.CONNECT)));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            bed.runToQuiet(60_000); // 100 us * (2^8 - 1) = 25.5 ms, then the last try times out
            assertEquals(SprayHandshake.Pending.State.FAILED, bed.pending.state());
            assertEquals(SprayHandshake.CONNECT_TRIES, bed.pending.tries());
        }
    }

    @Test
    void shouldKeepConnectingUntilTheApplicationsDeadlineWithTheBackoffCappedS91()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.connectForNanos = 3_000_000_000L;
        final long[] lastConnectAt = {0};
        final long[] longestGap = {0};
        options.wrapA((plane, port) -> new FaultInjectingPacketPort(port, 1, 1.0, 0, 0, opcode(SprayOpcodes.CONNECT)));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final long start = bed.now;
            // virtual time in 1 ms jumps: the CONNECTs go on past the 8 tries, at most 1 s apart, until the deadline
            while (bed.pending.state() == SprayHandshake.Pending.State.CONNECTING && bed.now - start < 10_000_000_000L)
            {
                final int tries = bed.pending.tries();
                bed.now += 1_000_000;
                bed.step();
                if (bed.pending.tries() > tries)
                {
                    longestGap[0] = Math.max(longestGap[0], bed.now - lastConnectAt[0]);
                    lastConnectAt[0] = bed.now;
                }
            }
            assertEquals(SprayHandshake.Pending.State.FAILED, bed.pending.state());
            assertEquals(RejectReason.NO_ANSWER, bed.pending.reason());
            assertTrue(bed.pending.tries() > SprayHandshake.CONNECT_TRIES, bed.pending.tries() + " CONNECTs");
            final long failedAfter = bed.now - start;
            assertTrue(failedAfter >= 3_000_000_000L && failedAfter <= 4_100_000_000L, "failed after " + failedAfter + " ns");
            assertTrue(longestGap[0] <= SprayHandshake.CONNECT_BACKOFF_MAX_NANOS + 2_000_000, "gap " + longestGap[0]);
        }
    }
}
