package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static io.spraynic.datapath.neighbour.NeighbourCounters.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
final class NeighbourAgentTest
{
    private static final long SECOND = 1_000_000_000L;
    private static final int OURS = Wire.parseIpv4("10.0.1.10");
    private static final long OUR_MAC = 0x02_00_00_00_01_0AL;
    private static final int PEER = Wire.parseIpv4("10.0.1.20");
    private static final long PEER_MAC = 0x02_00_00_00_01_14L;
    private static final int GATEWAY = Wire.parseIpv4("10.0.1.1");

    private final RecordingFrameSink sink = new RecordingFrameSink(1500);
    private final List<long[]> told = new ArrayList<>();
    private final NeighbourAgent agent = new NeighbourAgent(2, InterfaceAddress.parse("10.0.1.10/24", "10.0.1.1"),
        OUR_MAC, sink, NeighbourConfig.defaults().withCapacity(8),
        (plane, high, low, mac) -> told.add(new long[]{plane, (int)low, mac}));

    @Test
    void shouldAnnounceItsAddressWithAGratuitousArpOnStart()
    {
        agent.start(0);
        assertEquals(1, sink.frames.size());
        assertArp(sink.last(), NeighbourAgent.BROADCAST_MAC, ArpHeader.OPERATION_REQUEST, OUR_MAC, OURS, 0, OURS);
        assertEquals(1, agent.counters().get(GRATUITOUS_SENT));
    }

    @Test
    void shouldAnswerAnArpRequestForItsAddressWithEveryFieldSet()
    {
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS), 0, 60, 0);
        assertEquals(1, sink.frames.size());
        final MemorySegment reply = sink.last();
        assertEquals(60, reply.byteSize(), "padded to the Ethernet minimum");
        assertArp(reply, PEER_MAC, ArpHeader.OPERATION_REPLY, OUR_MAC, OURS, PEER_MAC, PEER);
        for (int i = EthernetHeader.LENGTH + ArpHeader.LENGTH; i < 60; i++)
        {
            assertEquals(0, reply.get(Wire.BYTE, i), "padding byte " + i);
        }
        assertEquals(1, agent.counters().get(ARP_REQUESTS_RECEIVED));
        assertEquals(1, agent.counters().get(ARP_REPLIES_SENT));
        assertEquals(0, agent.cache().size(), "a request makes no entry");
    }

    @Test
    void shouldNeverAnswerForAnAddressThatIsNotOurs()
    {
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS + 1), 0, 60, 0);
        agent.onFrame(echo(PEER_MAC, PEER, OURS + 1, 1, 32), 0, 14 + 20 + 8 + 32, 0);
        assertEquals(0, sink.frames.size());
        assertEquals(2, agent.counters().get(DROPPED_NOT_FOR_US));
    }

    @Test
    void shouldResolveAPeerWithOneBroadcastRequestAndTellTheListener()
    {
        assertEquals(0, agent.resolve(PEER, 0));
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(PEER));
        assertArp(sink.take(), NeighbourAgent.BROADCAST_MAC, ArpHeader.OPERATION_REQUEST, OUR_MAC, OURS, 0, PEER);
        assertEquals(0, agent.resolve(PEER, 1), "asked already: no second request");
        assertEquals(0, sink.frames.size());

        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 2);
        assertEquals(NeighbourCache.REACHABLE, agent.state(PEER));
        assertEquals(PEER_MAC, agent.resolve(PEER, 3));
        assertEquals(1, told.size());
        assertArrayEquals(new long[]{2, PEER, PEER_MAC}, told.getFirst());
        assertEquals(1, agent.counters().get(RESOLVED));
        assertEquals(1, agent.counters().get(CACHE_HITS));
        assertEquals(2, agent.counters().get(CACHE_MISSES));
        assertEquals(1, agent.counters().get(ARP_REQUESTS_SENT));
    }

    @Test
    void shouldTryThreeTimesOneSecondApartThenFailAndHoldDown()
    {
        agent.resolve(PEER, 0);
        assertEquals(0, agent.onTick(SECOND - 1));
        agent.onTick(SECOND);
        agent.onTick(2 * SECOND);
        assertEquals(3, sink.frames.size(), "three requests");
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(PEER));
        agent.onTick(3 * SECOND);
        assertEquals(NeighbourCache.FAILED, agent.state(PEER));
        assertEquals(1, agent.counters().get(FAILURES));
        assertEquals(0, agent.resolve(PEER, 4 * SECOND), "held down: refused");
        assertEquals(3, sink.frames.size(), "and not asked again");
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 4 * SECOND);
        assertEquals(NeighbourCache.FAILED, agent.state(PEER), "a late reply to a failed entry is unsolicited");
        agent.onTick(8 * SECOND);
        assertEquals(NeighbourCache.FREE, agent.state(PEER), "forgotten after the hold-down");
        agent.resolve(PEER, 8 * SECOND);
        assertEquals(4, sink.frames.size(), "asked afresh");
    }

    @Test
    void shouldAskAFollowedNextHopAgainAfterEachHoldDownAndTellTheListenerWhenItComesBack()
    {
        agent.resolve(PEER, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 0);
        agent.follow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(PEER), 0); // a connection sends to it
        told.clear();
        // the peer reboots: silent past its reachable time and every try; its entry fails
        long now = 30 * SECOND;
        for (; agent.state(PEER) != NeighbourCache.FAILED && now < 60 * SECOND; now += SECOND)
        {
            agent.onTick(now);
        }
        assertEquals(NeighbourCache.FAILED, agent.state(PEER));
        // before, it was forgotten after the hold-down and never asked again, while its connections went on sending
        // to the old MAC; followed, it is asked again after each hold-down
        final long askedBefore = agent.counters().get(ARP_REQUESTS_SENT);
        agent.onTick(now + 5 * SECOND);
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(PEER), "asked again, not forgotten");
        assertEquals(askedBefore + 1, agent.counters().get(ARP_REQUESTS_SENT));
        assertEquals(1, agent.counters().get(FOLLOWED_ASKED_AGAIN));
        // it comes back with a new NIC and answers: the listener (every connection following it) is told
        final long replaced = PEER_MAC + 0x300;
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, replaced, PEER, OUR_MAC, OURS), 0, 60, now + 5 * SECOND + 1);
        assertEquals(replaced, agent.macOf(PEER));
        assertArrayEquals(new long[]{2, PEER, replaced}, told.getLast());

        // a failed entry that connections follow also takes the host's own announcement
        for (now += 6 * SECOND; agent.state(PEER) != NeighbourCache.FAILED && now < 120 * SECOND; now += SECOND)
        {
            agent.onTick(now);
        }
        assertEquals(NeighbourCache.FAILED, agent.state(PEER));
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, PEER), 0, 60, now);
        assertEquals(PEER_MAC, agent.macOf(PEER), "a gratuitous ARP of a followed, failed next hop");
        assertArrayEquals(new long[]{2, PEER, PEER_MAC}, told.getLast());

        // once no connection follows it, a failure is forgotten after the hold-down, as before
        agent.unfollow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(PEER));
        assertEquals(0, agent.followers(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(PEER)));
        for (now += SECOND; agent.state(PEER) != NeighbourCache.FREE && now < 200 * SECOND; now += SECOND)
        {
            agent.onTick(now);
        }
        assertEquals(NeighbourCache.FREE, agent.state(PEER));
    }

    @Test
    void shouldNeverEvictAFollowedNextHopToMakeRoom()
    {
        agent.follow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(GATEWAY), 0); // made, and asked
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(GATEWAY));
        assertEquals(1, agent.counters().get(ARP_REQUESTS_SENT));
        assertEquals(1, agent.followers(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(GATEWAY)));
        for (int i = 0; i < 20; i++) // the table holds 8: the least recently used goes each time, never the gateway
        {
            agent.resolve(0x0A00_0150 + i, SECOND + i);
        }
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(GATEWAY), "followed: kept although the oldest");
        assertEquals(13, agent.counters().get(EVICTIONS));
    }

    @Test
    void shouldFollowAtMostHalfTheTableSoThatPeersNamingNextHopsCannotPinAllOfIt()
    {
        // accepted connections follow the next hops their CONNECTs name: a peer that names a new one per connection
        // would otherwise pin every entry, and the NIC's own resolves would find the table full for good
        for (int i = 0; i < 4; i++)
        {
            assertTrue(agent.follow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(0x0A00_0160 + i), i));
        }
        assertEquals(false, agent.follow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(0x0A00_0170), 5),
            "half the table of 8 is followed");
        assertEquals(1, agent.counters().get(FOLLOWS_REFUSED));
        assertTrue(agent.follow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(0x0A00_0160), 6), "one followed");
        for (int i = 0; i < 20; i++) // the other half still takes new entries, evicting among themselves
        {
            agent.resolve(0x0A00_0180 + i, SECOND + i);
        }
        for (int i = 0; i < 4; i++)
        {
            assertEquals(NeighbourCache.INCOMPLETE, agent.state(0x0A00_0160 + i), "followed entry " + i + " kept");
        }
        agent.unfollow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(0x0A00_0161));
        assertEquals(3, agent.cache().followedEntries());
        assertTrue(agent.follow(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(0x0A00_0171), 2 * SECOND),
            "room for one again");
    }

    @Test
    void shouldAskAgainWhenReachableRunsOutAndKeepTheMacMeanwhile()
    {
        agent.resolve(PEER, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 0);
        sink.frames.clear();
        agent.onTick(30 * SECOND);
        assertEquals(NeighbourCache.STALE, agent.state(PEER));
        assertEquals(PEER_MAC, agent.macOf(PEER));
        assertArp(sink.take(), PEER_MAC, ArpHeader.OPERATION_REQUEST, OUR_MAC, OURS, 0, PEER); // unicast probe
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 30 * SECOND + 5);
        assertEquals(NeighbourCache.REACHABLE, agent.state(PEER));
        assertEquals(1, told.size(), "the same MAC: the listener is not told again");
    }

    @Test
    void shouldFollowAGratuitousArpOfAKnownPeerButLearnNothingFromStrangers()
    {
        agent.resolve(PEER, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 0);
        final long moved = PEER_MAC + 0x100;
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, moved, PEER, 0, PEER), 0, 60, 1);
        assertEquals(moved, agent.macOf(PEER));
        assertArrayEquals(new long[]{2, PEER, moved}, told.getLast());
        assertEquals(1, agent.counters().get(MAC_CHANGES));
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, moved, PEER + 1, 0, PEER + 1), 0, 60, 2);
        assertEquals(NeighbourCache.FREE, agent.state(PEER + 1), "a stranger's announcement makes no entry");
        assertEquals(2, agent.counters().get(GRATUITOUS_RECEIVED));
    }

    @Test
    void shouldRefuseMacChangesOverTheirRateAndKeepTheListenerInStepWithTheTable()
    {
        agent.resolve(PEER, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 0);
        told.clear();
        // an attacker on the link flips the peer's MAC as fast as it can send: each change would make every worker
        // walk its connections; past the burst they are refused, the table and the listener agreeing on the last taken
        final long other = PEER_MAC + 0x100;
        for (int i = 0; i < 1_000; i++)
        {
            agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, (i & 1) == 0 ? other : PEER_MAC, PEER, 0, PEER), 0, 60, 1);
        }
        assertEquals(NeighbourAgent.MAC_CHANGE_BURST, agent.counters().get(MAC_CHANGES));
        // past the burst (an even count: back at PEER_MAC) every other frame would change it, and is refused
        assertEquals((1_000 - NeighbourAgent.MAC_CHANGE_BURST) / 2, agent.counters().get(MAC_CHANGES_RATE_LIMITED));
        assertEquals(PEER_MAC, agent.macOf(PEER));
        assertEquals(NeighbourAgent.MAC_CHANGE_BURST, told.size(), "told of each change taken, of no other");
        assertEquals(agent.macOf(PEER), told.getLast()[2], "the listener's last MAC is the table's");
        // a second later, a host that really moved is followed again
        final long moved = PEER_MAC + 0x200;
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, moved, PEER, 0, PEER), 0, 60, 1 + SECOND);
        assertEquals(moved, agent.macOf(PEER));
        assertArrayEquals(new long[]{2, PEER, moved}, told.getLast());

        // and every next hop with a MAC can be told again, as to a worker that missed an update
        agent.resolve(GATEWAY, 2 * SECOND); // asked, no MAC yet: not told
        told.clear();
        assertEquals(1, agent.forEachNextHop((plane, high, low, mac) -> told.add(new long[]{plane, (int)low, mac})));
        assertArrayEquals(new long[]{2, PEER, moved}, told.getFirst());
    }

    @Test
    void shouldRefuseUnsolicitedAndForgedRepliesWithoutTouchingTheCache()
    {
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 0);
        assertEquals(NeighbourCache.FREE, agent.state(PEER));
        agent.resolve(GATEWAY, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, 0x02_00_00_00_00_01L, GATEWAY, OUR_MAC, OURS), 0, 60, 1);
        final long attacker = 0x02_66_66_66_66_66L;
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, attacker, GATEWAY, OUR_MAC, OURS), 0, 60, 2);
        assertEquals(0x02_00_00_00_00_01L, agent.macOf(GATEWAY), "answered already: a second reply is unsolicited");
        assertEquals(2, agent.counters().get(DROPPED_UNSOLICITED_REPLY));
        assertEquals(1, told.size());
    }

    @Test
    void shouldDropMalformedArpByReason()
    {
        agent.resolve(PEER, 0);
        sink.frames.clear();
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS), 0, 41, 0);
        final MemorySegment badType = arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS);
        Wire.put16(badType, 14 + ArpHeader.HARDWARE_TYPE_OFFSET, 6);
        agent.onFrame(badType, 0, 60, 0);
        final MemorySegment badLength = arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS);
        Wire.put8(badLength, 14 + ArpHeader.PROTOCOL_LENGTH_OFFSET, 16);
        agent.onFrame(badLength, 0, 60, 0);
        agent.onFrame(arp(3, PEER_MAC, PEER, 0, OURS), 0, 60, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, 0x01_00_5E_00_00_01L, PEER, OUR_MAC, OURS), 0, 60, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, NeighbourAgent.BROADCAST_MAC, PEER, OUR_MAC, OURS), 0, 60, 0);
        final MemorySegment spoofed = arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS);
        EthernetHeader.sourceMac(spoofed, 0, PEER_MAC + 1); // ARP sender differs from the frame's source
        agent.onFrame(spoofed, 0, 60, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, OURS, 0, OURS), 0, 60, 0);
        assertEquals(1, agent.counters().get(DROPPED_TRUNCATED));
        assertEquals(2, agent.counters().get(DROPPED_BAD_FORMAT));
        assertEquals(1, agent.counters().get(DROPPED_BAD_OPERATION));
        assertEquals(3, agent.counters().get(DROPPED_BAD_SENDER));
        assertEquals(1, agent.counters().get(DROPPED_ADDRESS_CONFLICT));
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(PEER), "none of them answered the question");
        assertEquals(0, sink.frames.size(), "and none was answered");
    }

    /**
     * Strangers' requests empty the reply bucket, but a neighbour this agent holds (with the MAC it asks from) is
     * answered from a bucket of its own: before, a flood of requests left the peers whose traffic flows unanswered,
     * their entries for us failed, and their traffic stopped. A stranger that claims the peer's address from another
     * MAC is not the peer (judged before its request may change the entry).
     */
    @Test
    void shouldAnswerAKnownNeighbourWhileStrangersFloodTheReplyBucket()
    {
        agent.resolve(PEER, 0);
        agent.onFrame(arp(ArpHeader.OPERATION_REPLY, PEER_MAC, PEER, OUR_MAC, OURS), 0, 60, 1);
        assertEquals(NeighbourCache.REACHABLE, agent.state(PEER));
        sink.frames.clear();
        for (int i = 0; i < 200; i++)
        {
            agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, 0x02_00_00_20_00_00L | i, 0x0A00_0200 + i, 0, OURS), 0, 60, 2);
        }
        final long answered = agent.counters().get(ARP_REPLIES_SENT);
        assertTrue(answered < 100 && agent.counters().get(RATE_LIMITED) > 100, "the strangers' burst, then " +
            "rate-limited: " + answered);
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS), 0, 60, 2);
        assertEquals(answered + 1, agent.counters().get(ARP_REPLIES_SENT), "the peer is answered");
        assertArp(MemorySegment.ofArray(sink.frames.getLast()), PEER_MAC, ArpHeader.OPERATION_REPLY, OUR_MAC, OURS,
            PEER_MAC, PEER);
        agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, 0x02_00_00_66_00_00L, PEER, 0, OURS), 0, 60, 2);
        assertEquals(answered + 1, agent.counters().get(ARP_REPLIES_SENT), "the peer's address from another MAC is a " +
            "stranger: not answered from the peer's bucket");
    }

    @Test
    void shouldKeepTheCacheBoundedUnderAFloodOfRequestsAndResolutions()
    {
        final SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 10_000; i++)
        {
            final int ip = 0x0A00_0000 | random.nextInt(1 << 24);
            agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, 0x02_00_00_10_00_00L | i, ip, 0, OURS), 0, 60, i);
            agent.onFrame(arp(ArpHeader.OPERATION_REPLY, 0x02_00_00_10_00_00L | i, ip, OUR_MAC, OURS), 0, 60, i);
        }
        assertEquals(0, agent.cache().size(), "requests and unsolicited replies make no entries");
        assertEquals(64, agent.counters().get(ARP_REPLIES_SENT), "the burst, then rate-limited (no time passed)");
        assertEquals(10_000 - 64, agent.counters().get(RATE_LIMITED));
        for (int i = 0; i < 100; i++)
        {
            agent.resolve(0x0A00_0100 + i, 1_000_000 + i);
        }
        assertEquals(8, agent.cache().size());
        assertEquals(92, agent.counters().get(EVICTIONS));
        assertEquals(NeighbourCache.INCOMPLETE, agent.state(0x0A00_0100 + 99), "the newest stays");
        assertEquals(NeighbourCache.FREE, agent.state(0x0A00_0100), "the least recently used went");
    }

    @Test
    void shouldAnswerAnEchoRequestWithTheSameIdentifierSequenceAndData()
    {
        final int data = 56;
        final int length = 14 + 20 + 8 + data;
        agent.onFrame(echo(PEER_MAC, PEER, OURS, 0x1234, data), 0, length, 0);
        assertEquals(1, sink.frames.size());
        final MemorySegment reply = sink.last();
        assertEquals(length, reply.byteSize());
        assertEquals(PEER_MAC, EthernetHeader.destinationMac(reply, 0));
        assertEquals(OUR_MAC, EthernetHeader.sourceMac(reply, 0));
        assertEquals(EthernetHeader.ETHER_TYPE_IPV4, EthernetHeader.etherType(reply, 0));
        assertEquals(4, Ipv4Header.version(reply, 14));
        assertEquals(20, Ipv4Header.headerLength(reply, 14));
        assertEquals(20 + 8 + data, Ipv4Header.totalLength(reply, 14));
        assertEquals(64, Ipv4Header.ttl(reply, 14));
        assertEquals(IcmpHeader.PROTOCOL_ICMP, Ipv4Header.protocol(reply, 14));
        assertEquals(OURS, Ipv4Header.sourceAddress(reply, 14));
        assertEquals(PEER, Ipv4Header.destinationAddress(reply, 14));
        assertTrue(Ipv4Header.isChecksumValid(reply, 14, 20));
        assertEquals(IcmpHeader.TYPE_ECHO_REPLY, IcmpHeader.type(reply, 34));
        assertEquals(0, IcmpHeader.code(reply, 34));
        assertEquals(0x1234, IcmpHeader.identifier(reply, 34));
        assertEquals(7, IcmpHeader.sequence(reply, 34));
        assertEquals(0, IcmpHeader.internetChecksum(reply, 34, 8 + data), "ICMP checksum valid");
        for (int i = 0; i < data; i++)
        {
            assertEquals((byte)i, reply.get(Wire.BYTE, 42 + i), "data byte " + i);
        }
        assertEquals(1, agent.counters().get(ECHO_ANSWERED));
    }

    @Test
    void shouldDropBadEchoRequestsAndLimitTheRate()
    {
        final int length = 14 + 20 + 8 + 16;
        final MemorySegment badSum = echo(PEER_MAC, PEER, OURS, 1, 16);
        badSum.set(Wire.BYTE, 50, (byte)0x77);
        agent.onFrame(badSum, 0, length, 0);
        agent.onFrame(echo(PEER_MAC, PEER, OURS, 1, 16), 0, length - 1, 0); // shorter than the IP total length
        agent.onFrame(echo(NeighbourAgent.BROADCAST_MAC, PEER, OURS, 1, 16), 0, length, 0);
        agent.onFrame(echo(PEER_MAC, 0xE000_0001, OURS, 1, 16), 0, length, 0);
        assertEquals(2, agent.counters().get(DROPPED_BAD_ICMP));
        assertEquals(2, agent.counters().get(DROPPED_BAD_SENDER));
        assertEquals(0, sink.frames.size());
        for (int i = 0; i < 100; i++)
        {
            agent.onFrame(echo(PEER_MAC, PEER, OURS, 1, 16), 0, length, 0);
        }
        assertEquals(64, sink.frames.size());
        assertEquals(36, agent.counters().get(ECHO_RATE_LIMITED));
        agent.onFrame(echo(PEER_MAC, PEER, OURS, 1, 16), 0, length, SECOND / 1000); // 1 ms: one token back
        assertEquals(65, sink.frames.size());
    }

    @Test
    void shouldAnswerArpRequestsWhileAnEchoFloodIsRateLimited()
    {
        // anyone who can route to the address can ping it at any rate; before, echo and ARP replies shared one bucket,
        // so a flood of pings left almost nothing for the ARP requests by which the plane's peers keep resolving us
        final int length = 14 + 20 + 8 + 16;
        for (int i = 0; i < 10_000; i++)
        {
            agent.onFrame(echo(PEER_MAC, PEER, OURS, 1, 16), 0, length, i * 1_000L); // 1 Mpps for 10 ms
        }
        final long echoReplies = agent.counters().get(ECHO_ANSWERED);
        assertTrue(echoReplies >= 64 && echoReplies <= 64 + 11, echoReplies + " echo replies: the burst and the rate");
        assertEquals(10_000 - echoReplies, agent.counters().get(ECHO_RATE_LIMITED));
        for (int i = 0; i < 64; i++)
        {
            agent.onFrame(arp(ArpHeader.OPERATION_REQUEST, PEER_MAC, PEER, 0, OURS), 0, 60, 10_000_000L + i);
        }
        assertEquals(64, agent.counters().get(ARP_REPLIES_SENT), "every ARP request answered, from its own bucket");
        assertEquals(0, agent.counters().get(RATE_LIMITED));
    }

    static MemorySegment arp(final int operation, final long senderMac, final int senderIp, final long targetMac,
        final int targetIp)
    {
        return NeighbourFrames.arp(operation, senderMac, senderIp, targetMac, targetIp, OUR_MAC);
    }

    static MemorySegment echo(final long sourceMac, final int source, final int destination, final int identifier,
        final int data)
    {
        return NeighbourFrames.echo(OUR_MAC, sourceMac, source, destination, identifier, data);
    }

    static void assertArp(final MemorySegment f, final long destinationMac, final int operation, final long senderMac,
        final int senderIp, final long targetMac, final int targetIp)
    {
        assertEquals(destinationMac, EthernetHeader.destinationMac(f, 0), "Ethernet destination");
        assertEquals(OUR_MAC, EthernetHeader.sourceMac(f, 0), "Ethernet source");
        assertEquals(ArpHeader.ETHER_TYPE_ARP, EthernetHeader.etherType(f, 0));
        assertEquals(1, ArpHeader.hardwareType(f, 14));
        assertEquals(0x0800, ArpHeader.protocolType(f, 14));
        assertEquals(6, ArpHeader.hardwareLength(f, 14));
        assertEquals(4, ArpHeader.protocolLength(f, 14));
        assertEquals(operation, ArpHeader.operation(f, 14), "operation");
        assertEquals(senderMac, ArpHeader.senderMac(f, 14), "sender MAC");
        assertEquals(senderIp, ArpHeader.senderIp(f, 14), "sender IP");
        assertEquals(targetMac, ArpHeader.targetMac(f, 14), "target MAC");
        assertEquals(targetIp, ArpHeader.targetIp(f, 14), "target IP");
    }
}
