package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Icmpv6Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static io.spraynic.datapath.neighbour.NeighbourCounters.*;
import static io.spraynic.datapath.neighbour.NeighbourFrames.echo6;
import static io.spraynic.datapath.neighbour.NeighbourFrames.fixChecksum;
import static io.spraynic.datapath.neighbour.NeighbourFrames.linkLayerOption;
import static io.spraynic.datapath.neighbour.NeighbourFrames.neighbourMessage;
import static io.spraynic.datapath.wire.Icmpv6Header.FLAG_OVERRIDE;
import static io.spraynic.datapath.wire.Icmpv6Header.FLAG_SOLICITED;
import static io.spraynic.datapath.wire.Icmpv6Header.OPTION_SOURCE_LINK_LAYER;
import static io.spraynic.datapath.wire.Icmpv6Header.OPTION_TARGET_LINK_LAYER;
import static io.spraynic.datapath.wire.Icmpv6Header.TYPE_NEIGHBOUR_ADVERTISEMENT;
import static io.spraynic.datapath.wire.Icmpv6Header.TYPE_NEIGHBOUR_SOLICITATION;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@link NeighbourAgent} on an IPv6 plane: neighbour discovery (RFC 4861) and ICMPv6 echo, on frames built as a
 * host on the link sends them, and on frames an attacker sends.
 */
@Timeout(10)
final class NeighbourDiscoveryTest
{
    private static final long SECOND = 1_000_000_000L;
    private static final long[] OURS = InterfaceAddress.parseIpv6("fd00:1::10");
    private static final long OUR_MAC = 0x02_00_00_00_01_0AL;
    private static final long[] PEER = InterfaceAddress.parseIpv6("fd00:1::20");
    private static final long PEER_MAC = 0x02_00_00_00_01_14L;
    private static final long ATTACKER_MAC = 0x02_66_66_66_66_66L;
    private static final long[] OUR_SOLICITED = InterfaceAddress.parseIpv6("ff02::1:ff00:10");
    private static final long OUR_SOLICITED_MAC = 0x33_33_FF_00_00_10L;
    private static final long[] ALL_NODES = InterfaceAddress.parseIpv6("ff02::1");

    private final RecordingFrameSink sink = new RecordingFrameSink(1500);
    private final List<long[]> told = new ArrayList<>();
    private final NeighbourAgent agent = new NeighbourAgent(1, InterfaceAddress.parse("fd00:1::10/64", "fe80::1"),
        OUR_MAC, sink, NeighbourConfig.defaults().withCapacity(8), (plane, high, low, mac) ->
        told.add(new long[]{plane, high, low, mac}));

    @Test
    void shouldAnnounceItsAddressWithAnUnsolicitedAdvertisementToAllNodes()
    {
        agent.start(0);
        assertEquals(1, sink.frames.size());
        assertNeighbourMessage(sink.take(), TYPE_NEIGHBOUR_ADVERTISEMENT, 0x33_33_00_00_00_01L, ALL_NODES, FLAG_OVERRIDE,
            OURS, OPTION_TARGET_LINK_LAYER);
        assertEquals(1, agent.counters().get(UNSOLICITED_ADVERTISEMENTS_SENT));
        assertEquals(0, agent.counters().get(GRATUITOUS_SENT), "no ARP on an IPv6 plane");
    }

    @Test
    void shouldAnswerASolicitationToItsSolicitedNodeAddressAtTheSourceLinkLayerAddress()
    {
        agent.onFrame(segment(solicitation(PEER, OUR_SOLICITED, OURS, linkLayerOption(OPTION_SOURCE_LINK_LAYER, PEER_MAC))),
            0, 86, 0);
        assertEquals(1, sink.frames.size());
        assertNeighbourMessage(sink.take(), TYPE_NEIGHBOUR_ADVERTISEMENT, PEER_MAC, PEER, FLAG_SOLICITED | FLAG_OVERRIDE, OURS,
            OPTION_TARGET_LINK_LAYER);
        assertEquals(1, agent.counters().get(SOLICITATIONS_RECEIVED));
        assertEquals(1, agent.counters().get(ADVERTISEMENTS_SENT));
        assertEquals(0, agent.cache().size(), "a solicitation makes no entry");
    }

    @Test
    void shouldAnswerAUnicastProbeWithoutOptionsAtItsEthernetSource()
    {
        final byte[] probe = neighbourMessage(TYPE_NEIGHBOUR_SOLICITATION, OUR_MAC, PEER_MAC, PEER, OURS, 0, OURS);
        agent.onFrame(segment(probe), 0, probe.length, 0);
        assertNeighbourMessage(sink.take(), TYPE_NEIGHBOUR_ADVERTISEMENT, PEER_MAC, PEER, FLAG_SOLICITED | FLAG_OVERRIDE, OURS,
            OPTION_TARGET_LINK_LAYER);
    }

    static Stream<Arguments> badSolicitations()
    {
        final byte[] option = linkLayerOption(OPTION_SOURCE_LINK_LAYER, PEER_MAC);
        return Stream.of(
            bad("hop limit 254: it crossed a router", DROPPED_BAD_HOP_LIMIT, () ->
                rewrite(solicitation(PEER, OUR_SOLICITED, OURS, option), f -> f[14 + Ipv6Header.HOP_LIMIT_OFFSET] = (byte)254)),
            bad("a wrong checksum", DROPPED_BAD_ICMP, () -> damage(solicitation(PEER, OUR_SOLICITED, OURS, option), 54 + 2)),
            bad("a checksum right but over another source (the pseudo-header counts)", DROPPED_BAD_ICMP, () ->
                rewriteRaw(solicitation(PEER, OUR_SOLICITED, OURS, option), f -> f[14 + 8 + 15] ^= 1)),
            bad("code 1", DROPPED_BAD_ICMP, () -> rewrite(solicitation(PEER, OUR_SOLICITED, OURS, option), f -> f[55] = 1)),
            bad("20 bytes of ICMPv6: no room for the target", DROPPED_TRUNCATED, () -> truncatedMessage(20)),
            bad("a payload length beyond the frame", DROPPED_TRUNCATED, () ->
                rewriteRaw(solicitation(PEER, OUR_SOLICITED, OURS, option), f -> f[14 + 5] = (byte)(f[14 + 5] + 8))),
            bad("an option of length 0", DROPPED_BAD_OPTIONS, () ->
                solicitation(PEER, OUR_SOLICITED, OURS, option, new byte[]{9, 0, 0, 0, 0, 0, 0, 0})),
            bad("an option running past the message's end", DROPPED_BAD_OPTIONS, () ->
                solicitation(PEER, OUR_SOLICITED, OURS, new byte[]{1, 2, 2, 0, 0, 0, 1, 0x14})),
            bad("a lone option byte", DROPPED_BAD_OPTIONS, () -> withTrailingBytes(1)),
            bad("a link-layer address option of 16 bytes", DROPPED_BAD_OPTIONS, () -> solicitation(PEER, OUR_SOLICITED, OURS,
                new byte[]{1, 2, 2, 0, 0, 0, 1, 0x14, 0, 0, 0, 0, 0, 0, 0, 0})),
            bad("a multicast target", DROPPED_BAD_FORMAT, () -> solicitation(PEER, OUR_SOLICITED, ALL_NODES, option)),
            bad("a duplicate-address probe with a source link-layer option", DROPPED_BAD_FORMAT, () ->
                solicitation(new long[2], OUR_SOLICITED, OURS, option)),
            bad("a duplicate-address probe to a unicast address", DROPPED_BAD_FORMAT, () ->
                neighbourMessage(TYPE_NEIGHBOUR_SOLICITATION, OUR_MAC, PEER_MAC, new long[2], OURS, 0, OURS)),
            bad("someone else's address", DROPPED_NOT_FOR_US, () ->
                solicitation(PEER, InterfaceAddress.parseIpv6("ff02::1:ff00:30"), InterfaceAddress.parseIpv6("fd00:1::30"), option)),
            bad("our address asked at another's solicited-node address", DROPPED_NOT_FOR_US, () ->
                solicitation(PEER, InterfaceAddress.parseIpv6("ff02::1:ff00:30"), OURS, option)),
            bad("a multicast source link-layer address", DROPPED_BAD_SENDER, () ->
                solicitation(PEER, OUR_SOLICITED, OURS, linkLayerOption(OPTION_SOURCE_LINK_LAYER, 0x33_33_00_00_00_01L))),
            bad("a multicast source address", DROPPED_BAD_SENDER, () -> solicitation(ALL_NODES, OUR_SOLICITED, OURS, option)),
            bad("our own address as the source", DROPPED_ADDRESS_CONFLICT, () -> solicitation(OURS, OUR_SOLICITED, OURS, option)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badSolicitations")
    void shouldDropEverySolicitationThatBreaksTheRulesAndCountWhy(final String what, final int reason,
        final Supplier<byte[]> frame)
    {
        final byte[] f = frame.get();
        agent.onFrame(segment(f), 0, f.length, 0);
        assertEquals(0, sink.frames.size(), "not answered");
        assertEquals(1, agent.counters().get(reason), agent.counters().toString());
        assertEquals(0, agent.cache().size());
    }

    @Test
    void shouldResolveWithASolicitationToTheSolicitedNodeAddressAndTakeTheAnswer()
    {
        assertEquals(0, agent.resolve(PEER[0], PEER[1], 0));
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(PEER[0], PEER[1]));
        assertNeighbourMessage(sink.take(), TYPE_NEIGHBOUR_SOLICITATION, 0x33_33_FF_00_00_20L,
            InterfaceAddress.parseIpv6("ff02::1:ff00:20"), 0, PEER, OPTION_SOURCE_LINK_LAYER);
        assertEquals(0, agent.resolve(PEER[0], PEER[1], 1), "asked already: no second solicitation");
        assertEquals(0, sink.frames.size());

        agent.onFrame(segment(answer(PEER_MAC, FLAG_SOLICITED | FLAG_OVERRIDE)), 0, 86, 2);
        assertEquals(NeighbourCache.REACHABLE, agent.state(PEER[0], PEER[1]));
        assertEquals(PEER_MAC, agent.resolve(PEER[0], PEER[1], 3));
        assertEquals(1, told.size());
        assertArrayEquals(new long[]{1, PEER[0], PEER[1], PEER_MAC}, told.getFirst());
        assertEquals(1, agent.counters().get(RESOLVED));
        assertEquals(1, agent.counters().get(SOLICITATIONS_SENT));
    }

    @Test
    void shouldAskAgainDirectlyWhenAnEntryGoesStaleAndFailAfterItsTries()
    {
        agent.resolve(PEER[0], PEER[1], 0);
        sink.take();
        agent.onFrame(segment(answer(PEER_MAC, FLAG_SOLICITED | FLAG_OVERRIDE)), 0, 86, 0);
        agent.onTick(31 * SECOND); // reachable time over: STALE, asked again at its MAC
        assertEquals(NeighbourCache.STALE, agent.state(PEER[0], PEER[1]));
        assertNeighbourMessage(sink.take(), TYPE_NEIGHBOUR_SOLICITATION, PEER_MAC, PEER, 0, PEER, OPTION_SOURCE_LINK_LAYER);
        agent.onTick(32 * SECOND);
        agent.onTick(33 * SECOND);
        agent.onTick(34 * SECOND);
        assertEquals(NeighbourCache.FAILED, agent.state(PEER[0], PEER[1]));
        assertEquals(4, agent.counters().get(SOLICITATIONS_SENT), "the first, then three probes once stale");
        assertEquals(1, agent.counters().get(FAILURES));
    }

    @Test
    void shouldNeverLetAdvertisementsMakeOrPoisonEntries()
    {
        final SplittableRandom random = new SplittableRandom(4861);
        for (int i = 0; i < 200; i++)
        {
            final long[] stranger = {PEER[0], random.nextLong() & 0x0000_FFFF_FFFF_FFFFL};
            final byte[] flood = neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, OUR_MAC, ATTACKER_MAC, stranger, OURS,
                i % 2 == 0 ? FLAG_SOLICITED | FLAG_OVERRIDE : FLAG_OVERRIDE, stranger,
                linkLayerOption(OPTION_TARGET_LINK_LAYER, ATTACKER_MAC));
            agent.onFrame(segment(flood), 0, flood.length, i);
        }
        assertEquals(0, agent.cache().size(), "no entry made");
        assertEquals(200, agent.counters().get(DROPPED_UNSOLICITED_REPLY));
        assertEquals(0, sink.frames.size());

        agent.resolve(PEER[0], PEER[1], 0);
        agent.onFrame(segment(answer(PEER_MAC, FLAG_SOLICITED | FLAG_OVERRIDE)), 0, 86, 1);
        // a second "answer" from the attacker: nobody asked again, so it is refused
        agent.onFrame(segment(answer(ATTACKER_MAC, FLAG_SOLICITED | FLAG_OVERRIDE)), 0, 86, 2);
        assertEquals(PEER_MAC, agent.macOf(PEER[0], PEER[1]));
        assertEquals(201, agent.counters().get(DROPPED_UNSOLICITED_REPLY));
        // an announcement without the override flag confirms, never changes, a known MAC
        agent.onFrame(segment(answer(ATTACKER_MAC, 0)), 0, 86, 3);
        assertEquals(PEER_MAC, agent.macOf(PEER[0], PEER[1]));
        assertEquals(0, agent.counters().get(MAC_CHANGES));
        assertEquals(1, told.size(), "told once, of the real MAC");
    }

    @Test
    void shouldFollowAKnownNeighbourThatAnnouncesANewMacWithTheOverrideFlag()
    {
        agent.resolve(PEER[0], PEER[1], 0);
        agent.onFrame(segment(answer(PEER_MAC, FLAG_SOLICITED | FLAG_OVERRIDE)), 0, 86, 1);
        final long moved = 0x02_00_00_00_AA_01L;
        agent.onFrame(segment(answer(moved, FLAG_OVERRIDE)), 0, 86, 2);
        assertEquals(moved, agent.macOf(PEER[0], PEER[1]));
        assertEquals(1, agent.counters().get(MAC_CHANGES));
        assertEquals(1, agent.counters().get(UNSOLICITED_ADVERTISEMENTS_RECEIVED));
        assertArrayEquals(new long[]{1, PEER[0], PEER[1], moved}, told.getLast());
    }

    static Stream<Arguments> badAdvertisements()
    {
        final byte[] option = linkLayerOption(OPTION_TARGET_LINK_LAYER, PEER_MAC);
        return Stream.of(
            bad("hop limit 64", DROPPED_BAD_HOP_LIMIT, () ->
                rewrite(answer(PEER_MAC, FLAG_SOLICITED), f -> f[14 + Ipv6Header.HOP_LIMIT_OFFSET] = 64)),
            bad("a wrong checksum", DROPPED_BAD_ICMP, () -> damage(answer(PEER_MAC, FLAG_SOLICITED), 54 + 3)),
            bad("a solicited answer to a multicast address", DROPPED_BAD_FORMAT, () ->
                neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, 0x33_33_00_00_00_01L, PEER_MAC, PEER, ALL_NODES,
                    FLAG_SOLICITED | FLAG_OVERRIDE, PEER, option)),
            bad("an answer to another host's address, seen by a promiscuous port", DROPPED_NOT_FOR_US, () ->
                neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, 0x02_00_00_00_01_1EL, ATTACKER_MAC, PEER,
                    InterfaceAddress.parseIpv6("fd00:1::30"), FLAG_SOLICITED | FLAG_OVERRIDE, PEER,
                    linkLayerOption(OPTION_TARGET_LINK_LAYER, ATTACKER_MAC))),
            bad("an announcement to a group other than all nodes", DROPPED_NOT_FOR_US, () ->
                neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, 0x33_33_00_00_00_02L, ATTACKER_MAC, PEER,
                    InterfaceAddress.parseIpv6("ff02::2"), FLAG_OVERRIDE, PEER,
                    linkLayerOption(OPTION_TARGET_LINK_LAYER, ATTACKER_MAC))),
            bad("an option of length 0 after a good one", DROPPED_BAD_OPTIONS, () ->
                neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, OUR_MAC, PEER_MAC, PEER, OURS, FLAG_SOLICITED, PEER, option,
                    new byte[8])),
            bad("no target link-layer address for an unresolved entry", DROPPED_NO_LINK_LAYER_ADDRESS, () ->
                neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, OUR_MAC, PEER_MAC, PEER, OURS, FLAG_SOLICITED, PEER)),
            bad("a multicast target link-layer address", DROPPED_BAD_SENDER, () -> neighbourMessage(
                TYPE_NEIGHBOUR_ADVERTISEMENT, OUR_MAC, PEER_MAC, PEER, OURS, FLAG_SOLICITED, PEER,
                linkLayerOption(OPTION_TARGET_LINK_LAYER, 0xFF_FF_FF_FF_FF_FFL))),
            bad("another host claiming our address", DROPPED_ADDRESS_CONFLICT, () -> neighbourMessage(
                TYPE_NEIGHBOUR_ADVERTISEMENT, OUR_MAC, ATTACKER_MAC, PEER, OURS, FLAG_OVERRIDE, OURS,
                linkLayerOption(OPTION_TARGET_LINK_LAYER, ATTACKER_MAC))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badAdvertisements")
    void shouldDropEveryAdvertisementThatBreaksTheRulesAndCountWhy(final String what, final int reason,
        final Supplier<byte[]> frame)
    {
        agent.resolve(PEER[0], PEER[1], 0); // asked: a good answer would be taken
        sink.take();
        final byte[] f = frame.get();
        agent.onFrame(segment(f), 0, f.length, 1);
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(PEER[0], PEER[1]));
        assertEquals(1, agent.counters().get(reason), agent.counters().toString());
        assertEquals(0, told.size());
        assertEquals(0, sink.frames.size());
    }

    @Test
    void shouldDefendItsAddressAgainstADuplicateAddressProbe()
    {
        final byte[] probe = neighbourMessage(TYPE_NEIGHBOUR_SOLICITATION, OUR_SOLICITED_MAC, ATTACKER_MAC, new long[2],
            OUR_SOLICITED, 0, OURS);
        agent.onFrame(segment(probe), 0, probe.length, 0);
        assertNeighbourMessage(sink.take(), TYPE_NEIGHBOUR_ADVERTISEMENT, 0x33_33_00_00_00_01L, ALL_NODES, FLAG_OVERRIDE, OURS,
            OPTION_TARGET_LINK_LAYER);
        assertEquals(1, agent.counters().get(DROPPED_ADDRESS_CONFLICT));
    }

    @Test
    void shouldAnswerAnEchoRequestWithItsDataAndARightChecksum()
    {
        final byte[] request = echo6(OUR_MAC, PEER_MAC, PEER, OURS, 40);
        agent.onFrame(segment(request), 0, request.length, 0);
        final MemorySegment reply = sink.take();
        assertEquals(request.length, reply.byteSize());
        assertEquals(PEER_MAC, EthernetHeader.destinationMac(reply, 0));
        assertEquals(OUR_MAC, EthernetHeader.sourceMac(reply, 0));
        assertEquals(Ipv6Header.NEXT_HEADER_ICMPV6, Ipv6Header.nextHeader(reply, 14));
        assertEquals(64, Ipv6Header.hopLimit(reply, 14));
        assertArrayEquals(OURS, new long[]{Ipv6Header.sourceAddressHigh(reply, 14), Ipv6Header.sourceAddressLow(reply, 14)});
        assertArrayEquals(PEER, new long[]{Ipv6Header.destinationAddressHigh(reply, 14),
            Ipv6Header.destinationAddressLow(reply, 14)});
        assertEquals(Icmpv6Header.TYPE_ECHO_REPLY, IcmpHeader.type(reply, 54));
        assertTrue(Icmpv6Header.isChecksumValid(reply, 14, 54, 8 + 40));
        assertArrayEquals(Arrays.copyOfRange(request, 58, request.length),
            Arrays.copyOfRange(reply.toArray(Wire.BYTE), 58, request.length), "identifier, sequence and data echoed");
        assertEquals(1, agent.counters().get(ECHO_ANSWERED));
    }

    @Test
    void shouldNotAnswerEchoRequestsThatAreNotForItOrBroken()
    {
        final byte[] other = echo6(OUR_MAC, PEER_MAC, PEER, InterfaceAddress.parseIpv6("fd00:1::30"), 8);
        final byte[] multicast = echo6(0x33_33_00_00_00_01L, PEER_MAC, PEER, ALL_NODES, 8);
        final byte[] broken = damage(echo6(OUR_MAC, PEER_MAC, PEER, OURS, 8), 60);
        final byte[] fromMulticast = echo6(OUR_MAC, PEER_MAC, ALL_NODES, OURS, 8);
        for (final byte[] f : List.of(other, multicast, broken, fromMulticast))
        {
            agent.onFrame(segment(f), 0, f.length, 0);
        }
        assertEquals(0, sink.frames.size());
        assertEquals(2, agent.counters().get(DROPPED_NOT_FOR_US));
        assertEquals(1, agent.counters().get(DROPPED_BAD_ICMP));
        assertEquals(1, agent.counters().get(DROPPED_BAD_SENDER));
    }

    @Test
    void shouldLimitItsRepliesToTheConfiguredRate()
    {
        final int burst = NeighbourConfig.defaults().replyBurst();
        final byte[] ns = solicitation(PEER, OUR_SOLICITED, OURS, linkLayerOption(OPTION_SOURCE_LINK_LAYER, PEER_MAC));
        for (int i = 0; i < burst + 10; i++)
        {
            agent.onFrame(segment(ns), 0, ns.length, 0);
        }
        assertEquals(burst, sink.frames.size());
        assertEquals(10, agent.counters().get(RATE_LIMITED));
    }

    @Test
    void shouldAdvertiseWhileAnEchoFloodIsRateLimited()
    {
        final byte[] ping = echo6(OUR_MAC, PEER_MAC, PEER, OURS, 16);
        for (int i = 0; i < 5_000; i++)
        {
            agent.onFrame(segment(ping), 0, ping.length, 0);
        }
        final int burst = NeighbourConfig.defaults().replyBurst();
        assertEquals(burst, agent.counters().get(ECHO_ANSWERED));
        assertEquals(5_000 - burst, agent.counters().get(ECHO_RATE_LIMITED));
        final byte[] ns = solicitation(PEER, OUR_SOLICITED, OURS, linkLayerOption(OPTION_SOURCE_LINK_LAYER, PEER_MAC));
        for (int i = 0; i < burst; i++)
        {
            agent.onFrame(segment(ns), 0, ns.length, 0);
        }
        assertEquals(burst, agent.counters().get(ADVERTISEMENTS_SENT), "every solicitation answered, from its own bucket");
        assertEquals(0, agent.counters().get(RATE_LIMITED));
    }

    @Test
    void shouldLeaveArpAndOtherIpv6TrafficAloneOnAnIpv6Plane()
    {
        final MemorySegment arp = NeighbourFrames.arp(1, PEER_MAC, 0x0A00_0114, 0, 0x0A00_010A, 0);
        assertEquals(false, agent.onFrame(arp, 0, 60, 0));
        final byte[] udp = echo6(OUR_MAC, PEER_MAC, PEER, OURS, 8);
        udp[14 + Ipv6Header.NEXT_HEADER_OFFSET] = 17;
        assertEquals(false, agent.onFrame(segment(udp), 0, udp.length, 0));
        final byte[] routerSolicitation = echo6(OUR_MAC, PEER_MAC, PEER, OURS, 8);
        routerSolicitation[54] = (byte)133;
        assertEquals(true, agent.onFrame(segment(routerSolicitation), 0, routerSolicitation.length, 0));
        assertEquals(1, agent.counters().get(ICMP_OTHER));
        assertEquals(0, sink.frames.size());
    }

    @Test
    @Timeout(60)
    void shouldAnswerSolicitationsAndEchoAndDropFloodsWithoutAllocatingOnceWarm()
    {
        final RecordingFrameSink counting = RecordingFrameSink.counting(1500);
        final NeighbourAgent quiet = new NeighbourAgent(1, InterfaceAddress.parse("fd00:1::10/64", ""), OUR_MAC, counting,
            NeighbourConfig.defaults(), (plane, high, low, mac) -> { });
        final MemorySegment ns = segment(solicitation(PEER, OUR_SOLICITED, OURS,
            linkLayerOption(OPTION_SOURCE_LINK_LAYER, PEER_MAC)));
        final MemorySegment flood = segment(neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, OUR_MAC, ATTACKER_MAC,
            InterfaceAddress.parseIpv6("fd00:1::99"), OURS, FLAG_OVERRIDE, InterfaceAddress.parseIpv6("fd00:1::99"),
            linkLayerOption(OPTION_TARGET_LINK_LAYER, ATTACKER_MAC)));
        final byte[] echo = echo6(OUR_MAC, PEER_MAC, PEER, OURS, 56);
        final MemorySegment echoSegment = segment(echo);
        final long[] now = {0};
        final Runnable work = () ->
        {
            now[0] += 2_000_000L; // 2 ms: the reply budget refills, nothing is rate limited
            quiet.onFrame(ns, 0, 86, now[0]);
            quiet.onFrame(flood, 0, 86, now[0]);
            quiet.onFrame(echoSegment, 0, echo.length, now[0]);
            quiet.resolve(PEER[0], PEER[1], now[0]);
            quiet.onTick(now[0]);
        };
        for (int i = 0; i < 200_000; i++)
        {
            work.run();
        }
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        long best = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) // the first may still see a compilation land
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 50_000; i++)
            {
                work.run();
            }
            best = Math.min(best, threads.getCurrentThreadAllocatedBytes() - before);
        }
        assertEquals(0, best, "bytes allocated by 50,000 rounds of NS, NA flood, echo, resolve and timers");
        assertTrue(counting.commits > 500_000, "the replies went out: " + counting.commits);
        assertEquals(0, quiet.counters().get(RATE_LIMITED));
    }

    private static Arguments bad(final String what, final int reason, final Supplier<byte[]> frame)
    {
        return Arguments.of(what, reason, frame);
    }

    private static byte[] solicitation(final long[] source, final long[] destination, final long[] target,
        final byte[]... options)
    {
        final long mac = destination[0] >>> 56 == 0xFF ? Icmpv6Header.multicastMac(destination[1]) : OUR_MAC;
        return neighbourMessage(TYPE_NEIGHBOUR_SOLICITATION, mac, PEER_MAC, source, destination, 0, target, options);
    }

    private static byte[] answer(final long mac, final int flags)
    {
        return neighbourMessage(TYPE_NEIGHBOUR_ADVERTISEMENT, OUR_MAC, mac, PEER, OURS, flags, PEER,
            linkLayerOption(OPTION_TARGET_LINK_LAYER, mac));
    }

    private static byte[] truncatedMessage(final int icmpLength)
    {
        final byte[] full = solicitation(PEER, OUR_SOLICITED, OURS);
        final byte[] f = Arrays.copyOf(full, 54 + icmpLength);
        Wire.put16(MemorySegment.ofArray(f), 14 + Ipv6Header.PAYLOAD_LENGTH_OFFSET, icmpLength);
        return fixChecksum(f);
    }

    private static byte[] withTrailingBytes(final int extra)
    {
        final byte[] full = solicitation(PEER, OUR_SOLICITED, OURS);
        final byte[] f = Arrays.copyOf(full, full.length + extra);
        f[full.length] = 1;
        Wire.put16(MemorySegment.ofArray(f), 14 + Ipv6Header.PAYLOAD_LENGTH_OFFSET, f.length - 54);
        return fixChecksum(f);
    }

    // a field changed, the checksum made right again: only the rule under test is broken
    private static byte[] rewrite(final byte[] frame, final java.util.function.Consumer<byte[]> change)
    {
        change.accept(frame);
        return fixChecksum(frame);
    }

    // a field changed and the checksum left as it was
    private static byte[] rewriteRaw(final byte[] frame, final java.util.function.Consumer<byte[]> change)
    {
        change.accept(frame);
        return frame;
    }

    private static byte[] damage(final byte[] frame, final int at)
    {
        frame[at] ^= 0x40;
        return frame;
    }

    private static MemorySegment segment(final byte[] frame)
    {
        return MemorySegment.ofArray(frame);
    }

    private static void assertNeighbourMessage(final MemorySegment f, final int type, final long destinationMac,
        final long[] destination, final int flags, final long[] target, final int optionType)
    {
        final int icmpLength = Icmpv6Header.NEIGHBOUR_LENGTH + Icmpv6Header.LINK_LAYER_OPTION_LENGTH;
        assertEquals(14 + 40 + icmpLength, f.byteSize());
        assertEquals(destinationMac, EthernetHeader.destinationMac(f, 0));
        assertEquals(OUR_MAC, EthernetHeader.sourceMac(f, 0));
        assertEquals(EthernetHeader.ETHER_TYPE_IPV6, EthernetHeader.etherType(f, 0));
        assertEquals(6, Ipv6Header.version(f, 14));
        assertEquals(0, Ipv6Header.trafficClass(f, 14));
        assertEquals(icmpLength, Ipv6Header.payloadLength(f, 14));
        assertEquals(Ipv6Header.NEXT_HEADER_ICMPV6, Ipv6Header.nextHeader(f, 14));
        assertEquals(255, Ipv6Header.hopLimit(f, 14), "every ND message leaves with hop limit 255");
        assertArrayEquals(OURS, new long[]{Ipv6Header.sourceAddressHigh(f, 14), Ipv6Header.sourceAddressLow(f, 14)});
        assertArrayEquals(destination, new long[]{Ipv6Header.destinationAddressHigh(f, 14),
            Ipv6Header.destinationAddressLow(f, 14)});
        assertEquals(type, IcmpHeader.type(f, 54));
        assertEquals(0, IcmpHeader.code(f, 54));
        assertEquals(flags, Icmpv6Header.flags(f, 54));
        assertArrayEquals(target, new long[]{Icmpv6Header.targetHigh(f, 54), Icmpv6Header.targetLow(f, 54)});
        assertEquals(OUR_MAC, Icmpv6Header.linkLayerOption(f, 54, icmpLength, optionType));
        assertTrue(Icmpv6Header.isChecksumValid(f, 14, 54, icmpLength), "checksum over the pseudo-header");
    }
}
